import CourierDomain
import CourierPorts
import CourierTestSupport
import CourierURLSession
import Foundation
import Testing

/// What a hostile or broken server must not do to this adapter: exhaust memory with a gzip
/// bomb, or get a header it would silently drop.
@Suite("URLSessionTransport bounds", .serialized)
struct URLSessionBoundsTests {
  @Test("a gzip bomb fails at the 64 MiB limit and memory stays bounded")
  func gzipBomb() async throws {
    // About 1 KiB per MiB: 1 MiB on the wire, 1 GiB once inflated.
    let server = try LoopbackServer(.bytes(GzipBomb.response(mebibytes: 1024)))
    defer { server.stop() }
    GzipBomb.resetPeakResident()
    let before = GzipBomb.peakResidentBytes()
    let transport = URLSessionTransport()
    do {
      let response = try await transport.send(
        HTTPRequest(method: .get, url: server.url),
        options: TransportOptions(deadline: .seconds(60)))
      Issue.record("expected a failure, got \(response.status) with \(response.body.count) bytes")
    } catch let error as CourierError {
      #expect(error.kind == .invalidResponse, "\(error)")
      #expect(error.underlying?.contains("over \(64 << 20) bytes") == true, "\(error)")
    }
    // Measured once the client has let go of the connection: a transfer that went on
    // inflating after the error would show here.
    let closed = await GzipBomb.wait(atMost: .seconds(120)) {
      server.acceptedCount == 1 && server.openConnectionCount == 0
    }
    #expect(closed, "the client never closed the connection")
    let grown = GzipBomb.peakResidentBytes() - before
    #expect(grown < 512 << 20, "peak resident size grew by \(grown >> 20) MiB")
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

  @Test("a header value with CR, LF or another control character is refused, never sent")
  func headerValues() async throws {
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    for value in ["Bearer a\r\nX-Evil: 1", "Bearer a\nb", "a\u{0}b", "a\u{1B}[2Jb"] {
      do {
        _ = try await URLSessionTransport().send(
          HTTPRequest(method: .get, url: server.url, headers: ["Authorization": value]))
        Issue.record("expected a refusal for \(value.debugDescription)")
      } catch let error as CourierError {
        #expect(error.kind == .invalidInput)
        #expect(error.code == "invalid_header")
        #expect(error.userMessage.contains("Authorization"))
        #expect(!error.userMessage.contains("Bearer"))
      }
    }
    #expect(server.acceptedCount == 0)
  }
}
