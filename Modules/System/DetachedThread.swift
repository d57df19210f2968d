#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A detached POSIX thread, for the adapters that own one (curl's loop, the netlink reader,
/// the signal pipe, folder watches). Foundation's `Thread` would do the same, but it is the
/// only reason those modules would link swift-corelibs-foundation (with CoreFoundation and
/// ICU) into every program that uses them, at a cost paid at every start (Docs/decisions/1414).
package enum DetachedThread {
  /// Starts `body` on a new detached thread named `name`.
  /// - Parameters:
  ///   - name: the thread's name, as profilers and `/proc/PID/task/*/comm` show it (at most 15
  ///     bytes on Linux; longer names are cut).
  ///   - body: what the thread runs; the thread ends when it returns.
  package static func start(name: String, _ body: @escaping @Sendable () -> Void) {
    let context = Unmanaged.passRetained(Context(name: name, body: body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    #if canImport(Darwin)
      var thread: pthread_t?
    #else
      var thread = pthread_t()
    #endif
    let status = pthread_create(
      &thread, &attributes,
      { raw in
        #if canImport(Darwin)
          let context = Unmanaged<Context>.fromOpaque(raw).takeRetainedValue()
        #else
          guard let raw else { return nil }
          let context = Unmanaged<Context>.fromOpaque(raw).takeRetainedValue()
        #endif
        context.nameThisThread()
        context.body()
        return nil
      }, context)
    // Only EAGAIN (out of threads or memory) fails here; nothing a caller could do instead.
    precondition(status == 0, "pthread_create failed: \(status)")
  }

  private final class Context {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
      self.name = name
      self.body = body
    }

    func nameThisThread() {
      let cut = String(decoding: name.utf8.prefix(15), as: UTF8.self)
      #if canImport(Darwin)
        _ = pthread_setname_np(cut)
      #else
        // glibc's pthread_setname_np is not in Swift's Glibc module (it needs _GNU_SOURCE);
        // it writes this file too.
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = cut.withCString { write(fd, $0, strlen($0)) }
        close(fd)
      #endif
    }
  }
}
