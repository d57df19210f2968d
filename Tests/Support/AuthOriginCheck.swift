import CourierDomain
import CourierPorts
import Foundation
import HTTPTypes

/// What a transport under `AuthTransport` must show on the wire: the token at the base URL's
/// origin only. Adapter test targets run it with their adapter (Tests/CurlTests,
/// Tests/URLSessionTests); it returns the request heads each server recorded.
public enum AuthOriginCheck {
  /// A 200 with an empty JSON object, closed after.
  public static let ok =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
    + "Connection: close\r\n\r\n{}"

  /// Sends through `authorized` to the base server, then to another origin (another port of
  /// 127.0.0.1, and the same port under another host name), and returns what each received.
  /// - Parameters:
  ///   - base: the base server.
  ///   - other: another server.
  ///   - authorized: sends one request through an `AuthTransport` whose origin is `base`.
  /// - Returns: the request heads of the base and the other server.
  /// - Throws: what the sends throw.
  public static func run(
    base: LoopbackServer, other: LoopbackServer,
    _ authorized: (HTTPRequest) async throws -> (HTTPResponse, ResponseBody)
  ) async throws -> (base: [String], other: [String]) {
    _ = try await authorized(HTTPRequest(method: .get, url: base.url.appendingPathComponent("a")))
    _ = try await authorized(HTTPRequest(method: .get, url: other.url.appendingPathComponent("b")))
    let sameHostOtherName = URL(string: "http://localhost:\(base.port)/c") ?? base.url
    _ = try await authorized(HTTPRequest(method: .get, url: sameHostOtherName))
    return (base.requestHeads, other.requestHeads)
  }
}
