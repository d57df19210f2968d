import CourierDomain
import CourierPorts
import CourierTestSupport
import CourierURLSession
import Foundation
import HTTPTypes
import Testing

/// What a hostile or broken server must not do to this adapter: exhaust memory with a gzip bomb
/// (the contract's bound, measured in a probe process) or a raw body over the limit.
/// The other bounds are contract checks (`TransportContract.bounds`).
@Suite("URLSessionTransport bounds", .serialized)
struct URLSessionBoundsTests {
  @Test("a gzip bomb fails at the 64 MiB limit and memory stays bounded")
  func gzipBomb() async throws {
    let outcome = try await TransportContract.gzipBomb("urlsession")
    #expect(outcome.refusedAtLimit, "\(outcome)")
    #expect(outcome.closed, "the client never closed the connection: \(outcome)")
    #expect(outcome.peakBytes > 0 && outcome.peakBytes < 512 << 20, "\(outcome)")
  }

  @Test("a raw body over the limit fails the same way")
  func rawBody() async throws {
    let body = String(repeating: "x", count: 5000)
    let server = try LoopbackServer(
      .raw(
        "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
          + body))
    defer { server.stop() }
    let transport = URLSessionTransport(maxResponseBytes: 1000)
    await #expect(throws: CourierError.self) {
      do {
        _ = try await transport.send(HTTPRequest(method: .get, url: server.url))
      } catch let error as CourierError {
        #expect(error.kind == .invalidResponse)
        throw error
      }
    }
  }
}
