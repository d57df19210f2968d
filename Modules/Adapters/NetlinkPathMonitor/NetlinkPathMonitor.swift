import CNetlink
import CourierDomain
import CourierPorts
import CourierSystem
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Watches the network path with rtnetlink (Linux), the way `NWPathMonitor` does on Apple
/// platforms. See Docs/netlink.md for the rule and what Linux cannot tell.
///
/// `run()` owns a dedicated thread that subscribes to link, address and route changes, takes a
/// full snapshot on a second socket, then applies each change and publishes the path when it
/// differs. The thread waits in `poll` on the socket and an eventfd, so cancellation wakes it at
/// once and the sockets are closed before `run()` returns.
public final class NetlinkPathMonitor: PathMonitor {
  /// How the monitor is set up.
  package struct Options: Sendable {
    /// A network namespace file (`/var/run/netns/NAME`) the monitor's thread enters before
    /// opening its sockets; nil for the process's namespace. Only that thread moves.
    package var namespacePath: String?
    /// SO_RCVBUF for the event socket; nil for the system default. A small value provokes
    /// overruns (tests, benchmarks).
    package var receiveBufferSize: Int?
    /// Runs on the monitor's thread before any socket is opened: an injection point for tests
    /// (enter a namespace some other way, fail on purpose). Throwing stops `run()`.
    package var prepareThread: (@Sendable () throws -> Void)?
    /// How long a dump may take before `run()` fails.
    package var dumpTimeout: Duration

    /// Creates options.
    /// - Parameters:
    ///   - namespacePath: the namespace to enter, or nil.
    ///   - receiveBufferSize: SO_RCVBUF for the event socket, or nil.
    ///   - prepareThread: runs first on the monitor's thread, or nil.
    ///   - dumpTimeout: the longest a dump may take.
    package init(
      namespacePath: String? = nil, receiveBufferSize: Int? = nil,
      prepareThread: (@Sendable () throws -> Void)? = nil, dumpTimeout: Duration = .seconds(5)
    ) {
      self.namespacePath = namespacePath
      self.receiveBufferSize = receiveBufferSize
      self.prepareThread = prepareThread
      self.dumpTimeout = dumpTimeout
    }
  }

  /// Counters, for tests and benchmarks.
  package struct Statistics: Sendable, Hashable {
    /// Full dumps of links, addresses and routes (the first one included).
    package var fullDumps = 0
    /// Route-only dumps after a delete or a link losing UP or carrier.
    package var routeDumps = 0
    /// Dumps redone because the kernel flagged them interrupted.
    package var interruptedDumps = 0
    /// Overruns (ENOBUFS, truncated or unparsable datagrams) that forced a resynchronisation.
    package var resynchronisations = 0
    /// Messages ignored because they did not come from the kernel.
    package var foreignMessages = 0
    /// Change messages applied.
    package var messagesApplied = 0
    /// The event socket's granted receive buffer, in bytes.
    package var receiveBufferSize = 0
  }

  private let options: Options
  private let broadcaster = PathBroadcaster()
  private let stats = Mutex(Statistics())

  /// Creates a monitor; nothing happens until `run()`.
  /// - Parameter options: the set-up.
  package init(options: Options) { self.options = options }

  /// Creates a monitor of this process's network namespace, over rtnetlink; nothing happens
  /// until `run()`.
  public convenience init() { self.init(options: Options()) }

  /// A new stream: the current path first, then every change, newest only for a slow consumer.
  /// - Returns: the stream.
  public func updates() -> AsyncStream<NetworkPath> { broadcaster.updates() }

  /// The latest path (`unknown` before the first snapshot).
  public var currentPath: NetworkPath { broadcaster.current }

  /// The generation of the current run (bumped by each `run()` and each resynchronisation).
  package var generation: UInt64 { broadcaster.generation }

  /// The counters so far.
  package var statistics: Statistics { stats.withLock { $0 } }

  /// Watches until the calling task is cancelled, then closes its sockets and returns. Calling
  /// it again restarts the monitor: a new generation, whose first value is a fresh snapshot,
  /// and nothing from the previous run gets through afterwards (a previous run still going
  /// stops at its next event).
  /// - Throws: `NetlinkMonitorError` when the namespace, a socket or a dump fails.
  public func run() async throws {
    let generation = broadcaster.restart()
    let wake = try WakeSignal()
    defer { wake.close() }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
        DetachedThread.start(name: "courier-netlink") { [self] in
          do {
            try watch(generation: generation, wake: wake)
            done.resume()
          } catch {
            done.resume(throwing: error)
          }
        }
      }
    } onCancel: {
      wake.signal()
    }
  }

  /// One full dump of links, addresses and routes, evaluated: the path now, in about a
  /// millisecond, without the monitor's subscription. Done on the calling thread, or on a
  /// thread of its own in the monitor's namespace when it has one; a failed dump answers
  /// `currentPath`.
  /// - Returns: the path.
  public func snapshot() async -> NetworkPath {
    let fallback = currentPath
    let generation = broadcaster.generation
    let namespace = options.namespacePath
    guard namespace != nil else {
      // In the process's own namespace the dump is done where the caller runs: the kernel
      // answers it at once (bounded by the session's timeout), and a thread of its own cost
      // `courier status` more than the dump (issue 14).
      return Self.dumpOnce(namespace: nil, generation: generation) ?? fallback
    }
    return await withCheckedContinuation { (done: CheckedContinuation<NetworkPath, Never>) in
      DetachedThread.start(name: "courier-nl-dump") {
        done.resume(
          returning: Self.dumpOnce(namespace: namespace, generation: generation) ?? fallback)
      }
    }
  }

  private static func dumpOnce(namespace: String?, generation: UInt64) -> NetworkPath? {
    if let namespace, courier_setns_net(namespace) != 0 { return nil }
    guard let wake = try? WakeSignal() else { return nil }
    defer { wake.close() }
    guard let requests = try? NetlinkSocket(groups: 0, receiveBuffer: nil) else { return nil }
    let stats = Mutex(Statistics())
    var session = Session(requests: requests, wake: wake, timeout: .seconds(2))
    return try? session.fullDump(stats).evaluate(generation: generation)
  }

  /// Times full resynchronisations (dump links, addresses and routes, then evaluate) in the
  /// calling thread's network namespace, for the probe Benchmarks/netlink runs.
  /// - Parameter repeats: how many snapshots to take.
  /// - Returns: each snapshot's duration, and the last path.
  /// - Throws: `NetlinkMonitorError` when a socket or a dump fails.
  package static func timeSnapshots(
    repeats: Int
  ) throws -> (durations: [Duration], path: NetworkPath) {
    let wake = try WakeSignal()
    defer { wake.close() }
    let stats = Mutex(Statistics())
    var session = Session(
      requests: try NetlinkSocket(groups: 0, receiveBuffer: nil), wake: wake, timeout: .seconds(5))
    let clock = ContinuousClock()
    var durations: [Duration] = []
    var path = NetworkPath.unknown
    for _ in 0..<repeats {
      let start = clock.now
      path = try session.fullDump(stats).evaluate(generation: 1)
      durations.append(clock.now - start)
    }
    return (durations, path)
  }

  // MARK: - The monitor's thread

  private struct Stopped: Error {}

  private func watch(generation start: UInt64, wake: WakeSignal) throws {
    if let path = options.namespacePath {
      let result = courier_setns_net(path)
      guard result == 0 else {
        throw NetlinkMonitorError(code: .namespace, errno: -result, context: "enter \(path)")
      }
    }
    try options.prepareThread?()
    // Subscribe first, then dump: a change during the dump is queued, not lost.
    let events = try NetlinkSocket(groups: RT.groups, receiveBuffer: options.receiveBufferSize)
    let requests = try NetlinkSocket(groups: 0, receiveBuffer: nil)
    stats.withLock { $0.receiveBufferSize = events.receiveBufferSize }
    var session = Session(requests: requests, wake: wake, timeout: options.dumpTimeout)
    var generation = start
    do {
      var tables = try session.fullDump(stats)
      lookUpDeviceTypes(&tables)
      broadcaster.offer(tables.evaluate(generation: generation))
      while true {
        let ready = courier_wait(events.fd, wake.fd, -1)
        if ready == 2 { return }
        guard ready > 0 else {
          throw NetlinkMonitorError(code: .receive, errno: -ready, context: "wait for changes")
        }
        let batch = try drain(events, into: &tables, buffer: &session.buffer)
        // A newer run() took over: stop without publishing.
        guard broadcaster.generation == generation else { return }
        if batch.overrun {
          // Events were lost: what is still queued belongs to a gap, so it was discarded;
          // a fresh snapshot replaces everything, under a new generation.
          stats.withLock { $0.resynchronisations += 1 }
          tables = try session.fullDump(stats)
          guard let next = broadcaster.resynchronise(from: generation) else { return }
          generation = next
        } else if batch.needsRouteDump {
          stats.withLock { $0.routeDumps += 1 }
          tables.replaceRoutes(with: try session.dumpRoutes(stats))
        }
        lookUpDeviceTypes(&tables)
        broadcaster.offer(tables.evaluate(generation: generation))
      }
    } catch is Stopped {
      return
    }
  }

  /// Reads DEVTYPE (`wlan`, `wwan`, `gadget`) from sysfs for links not looked up yet. Only in
  /// the process's own namespace: sysfs shows the mount namespace's devices, which in another
  /// network namespace may be different ones with the same name.
  private func lookUpDeviceTypes(_ tables: inout NetlinkTables) {
    guard options.namespacePath == nil, options.prepareThread == nil else { return }
    for link in tables.links.values where tables.deviceTypes[link.index] == nil {
      let uevent = try? String(
        contentsOfFile: "/sys/class/net/\(link.name)/uevent", encoding: .utf8)
      let line = uevent?.split(separator: "\n").first { $0.hasPrefix("DEVTYPE=") }
      tables.deviceTypes[link.index] = line.map { String($0.dropFirst("DEVTYPE=".count)) } ?? ""
    }
  }

  private struct Batch {
    var overrun = false
    var needsRouteDump = false
  }

  /// Reads every queued datagram and applies it; after an overrun, reads and discards the rest.
  private func drain(
    _ events: borrowing NetlinkSocket, into tables: inout NetlinkTables, buffer: inout [UInt8]
  ) throws -> Batch {
    var batch = Batch()
    var applied = 0
    var foreign = 0
    defer {
      stats.withLock {
        $0.messagesApplied += applied
        $0.foreignMessages += foreign
      }
    }
    while true {
      switch try events.receive(into: &buffer) {
      case .empty:
        return batch
      case .overrun:
        batch.overrun = true
      case .datagram(let bytes, let sender, let truncated):
        if batch.overrun { continue }
        guard sender == 0 else {
          foreign += 1
          continue
        }
        guard !truncated, let messages = try? NetlinkParser.parse(bytes) else {
          batch.overrun = true
          continue
        }
        for message in messages where tables.apply(message) == .needsRouteDump {
          batch.needsRouteDump = true
        }
        applied += messages.count
      }
    }
  }

  /// The request socket and its dump state.
  private struct Session: ~Copyable {
    let requests: NetlinkSocket
    let wake: WakeSignal
    let timeoutMilliseconds: Int32
    var sequence: UInt32 = 0
    var buffer = [UInt8](repeating: 0, count: 1 << 16)

    init(requests: consuming NetlinkSocket, wake: WakeSignal, timeout: Duration) {
      self.requests = requests
      self.wake = wake
      let (seconds, attoseconds) = timeout.components
      timeoutMilliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// Links, addresses and routes, redone while the kernel flags the dump interrupted.
    mutating func fullDump(_ stats: borrowing Mutex<Statistics>) throws -> NetlinkTables {
      var tables = NetlinkTables()
      for _ in 0..<10 {
        tables = NetlinkTables()
        var interrupted = false
        for type in [RT.getLink, RT.getAddress, RT.getRoute] {
          interrupted = try dump(type, into: &tables) || interrupted
        }
        stats.withLock { $0.fullDumps += 1 }
        if !interrupted { break }
        stats.withLock { $0.interruptedDumps += 1 }
      }
      return tables
    }

    mutating func dumpRoutes(_ stats: borrowing Mutex<Statistics>) throws -> NetlinkTables {
      var tables = NetlinkTables()
      for _ in 0..<10 {
        tables = NetlinkTables()
        if try !dump(RT.getRoute, into: &tables) { break }
        stats.withLock { $0.interruptedDumps += 1 }
      }
      return tables
    }

    /// One dump; returns whether the kernel flagged it interrupted (NLM_F_DUMP_INTR).
    private mutating func dump(_ type: UInt16, into tables: inout NetlinkTables) throws -> Bool {
      sequence &+= 1
      let context =
        "dump \(type == RT.getLink ? "links" : type == RT.getAddress ? "addresses" : "routes")"
      try requests.requestDump(type: type, sequence: sequence)
      var interrupted = false
      while true {
        let ready = courier_wait(requests.fd, wake.fd, timeoutMilliseconds)
        if ready == 2 { throw Stopped() }
        guard ready > 0 else {
          throw NetlinkMonitorError(code: .dump, errno: -ready, context: context)
        }
        reading: while true {
          let bytes: [UInt8]
          switch try requests.receive(into: &buffer) {
          case .empty: break reading
          // Part of this dump was lost: redo it (later replies carry an older sequence).
          case .overrun: return true
          case .datagram(let datagram, let sender, let truncated):
            guard sender == 0 else { continue }
            guard !truncated else {
              throw NetlinkMonitorError(code: .dump, errno: EMSGSIZE, context: context)
            }
            bytes = datagram
          }
          let messages: [NetlinkMessage]
          do {
            messages = try NetlinkParser.parse(bytes)
          } catch {
            throw NetlinkMonitorError(code: .dump, errno: EPROTO, context: "\(context) (\(error))")
          }
          for message in messages where message.sequence == sequence {
            if message.flags & RT.flagDumpInterrupted != 0 { interrupted = true }
            switch message.payload {
            case .done:
              return interrupted
            case .error(let code) where code != 0:
              throw NetlinkMonitorError(code: .dump, errno: -code, context: context)
            default:
              _ = tables.apply(message)
            }
          }
        }
      }
    }
  }
}
