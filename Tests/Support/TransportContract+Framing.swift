import CourierDomain
import CourierPorts
import Foundation
import HTTPTypes
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What an adapter cannot do as the contract asks, each limit recorded in a decision (2435): a
/// check that meets one asserts the limit as it is, so that a platform that lifts it fails the
/// check, and the limit is taken off.
public struct TransportLimits: Sendable {
  /// The adapter's name for `courier-transport-probe` (`curl`, `urlsession`): a check that can
  /// stop the process runs the adapter there.
  public var probeName: String
  /// Whether the adapter sees the status line itself, and so its HTTP-version
  /// (`HTTPURLResponse` keeps neither).
  public var readsStatusLine = true
  /// Whether the adapter takes a status line that ends at its code (`HTTP/1.1 200`, no space
  /// after it).
  public var takesStatusWithoutSpace = true
  /// Whether a reply with trailer fields leaves the process running (FoundationNetworking
  /// stops it).
  public var survivesTrailers = true

  /// Limits with every capability the contract asks for.
  /// - Parameter probeName: the adapter's name for the probe.
  public init(probeName: String) { self.probeName = probeName }

  /// The limits of the running check: set by `TransportContract.run(_:limits:)`.
  @TaskLocal public static var current = TransportLimits(probeName: "")
}

// How a reply is framed (RFC 9112): the status line, the body's length and the trailer fields
// that may follow a chunked body. A reply whose framing is wrong is a bad reply, never a
// success, a lost connection or a crash (decisions 2434, 2435, 2436).
extension TransportContract {
  /// The framing checks, run with the others by `all`.
  static let framing: [TransportContract] = [
    trailersApart, statusLineCaseSensitive, statusWithoutReason, truncatedBody, lengthsConflict,
  ]

  /// A chunked reply of `hello` whose trailer section carries `X-Checksum: abc`.
  static let chunkedWithTrailers =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
    + "Trailer: X-Checksum\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n"

  static let trailersApart = TransportContract(
    name: "a chunked reply with trailers: the body whole, the trailers apart from the header fields"
  ) { make, _ in
    let server = try LoopbackServer(.raw(chunkedWithTrailers))
    defer { server.stop() }
    let limits = TransportLimits.current
    guard limits.survivesTrailers else {
      // The recorded limit, in a process of its own: FoundationNetworking stops the process
      // once the trailers have come, before any of the adapter's code can run.
      let probe = try await probeGet(limits.probeName, server.url)
      #expect(probe.signaled && probe.status == SIGILL, "\(probe)")
      #expect(probe.stderr.contains("Transfer completed, but there's no response"), "\(probe)")
      return
    }
    let (response, body) = try await make(.satisfied).send(
      HTTPRequest(method: .get, url: server.url.appendingPathComponent("trailers")))
    #expect(response.status == 200)
    #expect(String(decoding: body.bytes, as: UTF8.self) == "hello")
    #expect(response.headerFields[.named("X-Checksum")] == nil, "\(response.headerFields)")
    #expect(response.headerFields[.trailer] == "X-Checksum")
    // Apart, where the body's type has a place for them.
    #expect(body.trailerFields == [.named("X-Checksum"): "abc"])
  }

  static let statusLineCaseSensitive = TransportContract(
    name: "the HTTP-version is case-sensitive: `Http/1.1 200 OK` is a bad reply, not a success"
  ) { make, _ in
    let server = try LoopbackServer(
      .raw("Http/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"))
    defer { server.stop() }
    let transport = make(.satisfied)
    let request = HTTPRequest(method: .get, url: server.url.appendingPathComponent("x"))
    guard TransportLimits.current.readsStatusLine else {
      // The recorded limit: the adapter is handed a status code and never sees the version.
      #expect(try await transport.send(request).0.status == 200)
      return
    }
    let error = try await failure(of: transport, request)
    #expect(error.kind == .invalidResponse, "\(error)")
    #expect(error.code == "reply_status_line_invalid", "\(error)")
    #expect(error.mayHaveReachedServer)
  }

  static let statusWithoutReason = TransportContract(
    name: "a status line without a reason phrase is a reply: `HTTP/1.1 200 ` and `HTTP/1.1 200`"
  ) { make, _ in
    let transport = make(.satisfied)
    for (line, isBare) in [("HTTP/1.1 200 ", false), ("HTTP/1.1 200", true)] {
      let server = try LoopbackServer(
        .raw("\(line)\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"))
      defer { server.stop() }
      let request = HTTPRequest(method: .get, url: server.url.appendingPathComponent("x"))
      if isBare, !TransportLimits.current.takesStatusWithoutSpace {
        // The recorded limit: refused as a bad reply, never taken as something else.
        let error = try await failure(of: transport, request)
        #expect(error.kind == .invalidResponse, "\(line.debugDescription): \(error)")
        continue
      }
      let (response, body) = try await transport.send(request)
      #expect(response.status == 200, "\(line.debugDescription)")
      #expect(body.bytes == Data("{}".utf8), "\(line.debugDescription)")
    }
  }

  static let truncatedBody = TransportContract(
    name: "a body cut short of its length or its last chunk is a truncated reply, not a lost "
      + "connection"
  ) { make, _ in
    let transport = make(.satisfied)
    let fifty = String(repeating: "0123456789", count: 5)
    for reply in [
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n\(fifty)",
      "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n32\r\n\(fifty)\r\n",
    ] {
      let server = try LoopbackServer(.raw(reply))
      defer { server.stop() }
      let error = try await failure(
        of: transport, HTTPRequest(method: .get, url: server.url.appendingPathComponent("x")))
      #expect(error.kind == .invalidResponse, "\(reply.prefix(40).debugDescription): \(error)")
      #expect(error.code == "reply_truncated", "\(error)")
      #expect(error.mayHaveReachedServer)
      #expect(!error.isTransient)
    }
    #expect(try await healthStatus(through: transport) == 200)
  }

  static let lengthsConflict = TransportContract(
    name: "conflicting lengths are a bad reply: two Content-Lengths, a list, a length beside "
      + "chunked"
  ) { make, _ in
    let transport = make(.satisfied)
    let ten = "0123456789"
    for head in [
      "Content-Length: 10\r\nContent-Length: 20", "Content-Length: 20\r\nContent-Length: 10",
      "Content-Length: 10, 20",
    ] {
      let server = try LoopbackServer(.raw("HTTP/1.1 200 OK\r\n\(head)\r\n\r\n\(ten)"))
      defer { server.stop() }
      let error = try await failure(
        of: transport, HTTPRequest(method: .get, url: server.url.appendingPathComponent("x")))
      #expect(error.kind == .invalidResponse, "\(head.debugDescription): \(error)")
      #expect(error.code == "reply_length_conflict", "\(head.debugDescription): \(error)")
      #expect(error.mayHaveReachedServer)
    }
    let smuggled = try LoopbackServer(
      .raw(
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\n"
          + "5\r\nhello\r\n0\r\n\r\n"))
    defer { smuggled.stop() }
    let error = try await failure(of: transport, HTTPRequest(method: .get, url: smuggled.url))
    #expect(error.code == "reply_length_conflict", "\(error)")
    // The same length twice is one length (RFC 9110 §8.6).
    let repeated = try LoopbackServer(
      .raw("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nConnection: close\r\n\r\n{}"))
    defer { repeated.stop() }
    let (response, body) = try await transport.send(HTTPRequest(method: .get, url: repeated.url))
    #expect(response.status == 200)
    #expect(body.bytes == Data("{}".utf8))
  }

  /// Sends one GET through the adapter the probe names, in the probe's own process.
  /// - Parameters:
  ///   - adapter: the probe's name for the adapter.
  ///   - url: what to get.
  /// - Returns: how the probe ended and what it printed.
  /// - Throws: when the probe is missing or cannot start.
  static func probeGet(_ adapter: String, _ url: URL) async throws -> ChildProcess.Result {
    let probe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("courier-transport-probe")
    try #require(
      FileManager.default.isExecutableFile(atPath: probe.path), "no probe at \(probe.path)")
    // An existing file as the go-ahead: the probe reports and exits at once.
    return try await ChildProcess.run([probe.path, "get", adapter, url.absoluteString, "/"])
  }
}
