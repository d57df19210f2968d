import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A tiny TCP server on 127.0.0.1 that misbehaves on purpose, for transport tests: it resets,
/// closes mid-body, hangs or answers garbage. Each accepted connection is handled on its own
/// thread; `stop()` closes everything.
public final class LoopbackServer: Sendable {
  /// How the server answers each request.
  public enum Behaviour: Sendable {
    /// Reads the request, then resets the connection (RST).
    case reset
    /// Sends headers promising 1000 bytes, 10 bytes, then closes.
    case closeMidBody
    /// Reads the request and never answers.
    case hang
    /// Answers bytes that are not HTTP, then closes.
    case garbage
    /// Reads the request and closes without a byte.
    case closeWithoutResponse
    /// Answers a fixed raw HTTP response.
    case raw(String)
    /// Answers fixed raw bytes (a compressed body, say).
    case bytes(Data)
    /// Answers raw HTTP made from the request as sent (its head and what was read of its
    /// body, as UTF-8): a server that repeats what it was sent.
    case echo(@Sendable (String) -> String)
  }

  /// The port it listens on.
  public let port: Int
  private let listener: Int32
  private let behaviour: Behaviour
  private let connections = Mutex<[Int32]>([])
  private let stopped = Mutex(false)
  /// How many connections were accepted.
  public var acceptedCount: Int { accepted.withLock { $0 } }
  private let accepted = Mutex(0)
  /// How many accepted connections are still open on the server's side.
  public var openConnectionCount: Int { connections.withLock { $0.count } }
  /// The head (request line and fields, lower-cased) of each request read, in arrival order.
  public var requestHeads: [String] { heads.withLock { $0 } }
  private let heads = Mutex<[String]>([])

  /// Starts a server.
  /// - Parameter behaviour: how it answers.
  /// - Throws: when no socket can be bound.
  public init(_ behaviour: Behaviour) throws {
    self.behaviour = behaviour
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EIO) }
    var yes: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(fd, 64) == 0 else {
      close(fd)
      throw POSIXError(.EADDRINUSE)
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    self.port = Int(UInt16(bigEndian: address.sin_port))
    self.listener = fd
    let thread = Thread { [self] in acceptLoop() }
    thread.start()
  }

  /// The server's base URL.
  public var url: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

  /// Closes the listener and every connection.
  public func stop() {
    let already = stopped.withLock { value -> Bool in
      defer { value = true }
      return value
    }
    guard !already else { return }
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
    // Under the lock, so a descriptor closed and reused elsewhere is never shut down here.
    connections.withLock { fds in
      for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
    }
  }

  deinit { stop() }

  private func acceptLoop() {
    while !stopped.withLock({ $0 }) {
      let fd = accept(listener, nil, nil)
      guard fd >= 0 else { return }
      accepted.withLock { $0 += 1 }
      connections.withLock { $0.append(fd) }
      let thread = Thread { [self] in handle(fd) }
      thread.start()
    }
  }

  /// Reads one request; returns what was read of it, as UTF-8.
  @discardableResult
  private func readRequest(_ fd: Int32) -> String {
    var buffer = [UInt8](repeating: 0, count: 65536)
    var received = [UInt8]()
    var recorded = false
    var sent: String { String(decoding: received, as: UTF8.self) }
    while true {
      let count = recv(fd, &buffer, buffer.count, 0)
      if count <= 0 { return sent }
      received += buffer[0..<count]
      if let text = String(bytes: received, encoding: .utf8), let end = text.range(of: "\r\n\r\n") {
        let head = text[..<end.lowerBound].lowercased()
        if !recorded {
          heads.withLock { $0.append(head) }
          recorded = true
        }
        if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }
        ),
          let length = Int(
            line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        {
          let bodySoFar =
            received.count - text.utf8.distance(from: text.startIndex, to: end.upperBound)
          if bodySoFar >= length { return sent }
        } else {
          return sent
        }
      }
    }
  }

  private func send(_ fd: Int32, _ text: String) { send(fd, Data(text.utf8)) }

  private func send(_ fd: Int32, _ data: Data) {
    let bytes = [UInt8](data)
    _ = bytes.withUnsafeBufferPointer {
      Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
    }
  }

  private func handle(_ fd: Int32) {
    defer {
      connections.withLock { fds in
        fds.removeAll { $0 == fd }
        close(fd)
      }
    }
    let request = readRequest(fd)
    switch behaviour {
    case .reset:
      var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    case .closeMidBody:
      send(
        fd, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n0123456789")
    case .hang:
      var byte: UInt8 = 0
      _ = recv(fd, &byte, 1, 0)  // returns when stop() shuts the socket down
    case .garbage:
      send(fd, "SSH-2.0-OpenSSH_9.2 garbage\r\n\u{1}\u{2}\u{3}\r\n\r\n")
    case .closeWithoutResponse:
      break
    case .raw(let response):
      send(fd, response)
      shutdown(fd, Int32(SHUT_WR))
      var byte: UInt8 = 0
      _ = recv(fd, &byte, 1, 0)
    case .bytes(let response):
      send(fd, response)
      shutdown(fd, Int32(SHUT_WR))
      var byte: UInt8 = 0
      _ = recv(fd, &byte, 1, 0)
    case .echo(let answer):
      send(fd, answer(request))
      shutdown(fd, Int32(SHUT_WR))
      var byte: UInt8 = 0
      _ = recv(fd, &byte, 1, 0)
    }
  }
}

/// Finds a free TCP port on 127.0.0.1.
/// - Returns: a port nothing listens on now.
public func freeLoopbackPort() -> Int {
  guard let server = try? LoopbackServer(.closeWithoutResponse) else { return 0 }
  let port = server.port
  server.stop()
  return port
}

/// A loopback port that refuses every connection for as long as this value lives: a TCP socket
/// bound to it and never listening, so no other process or test can take the port in between
/// (what a port found free and closed again allows).
public final class RefusingLoopbackPort: Sendable {
  /// The port.
  public let port: Int
  private let descriptor: Int32

  /// Binds a socket to a free loopback port without listening on it.
  public init() throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard bound == 0, named == 0 else {
      close(fd)
      throw POSIXError(.EADDRINUSE)
    }
    descriptor = fd
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  deinit { close(descriptor) }
}
