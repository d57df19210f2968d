import CourierCurl
import CourierDomain
import CourierPorts
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

/// The gzip bomb bound of the transport contract (`TransportContract.gzipBomb`): the
/// transport runs in a probe process, whose peak resident size is measured. The other bounds are
/// contract checks.
@Suite("CurlTransport bounds", .serialized)
struct CurlBoundsTests {
  @Test("a gzip bomb fails at the 64 MiB limit and memory stays bounded")
  func gzipBomb() async throws {
    let outcome = try await TransportContract.gzipBomb("curl")
    #expect(outcome.refusedAtLimit, "\(outcome)")
    #expect(outcome.closed, "the client never closed the connection: \(outcome)")
    #expect(outcome.peakBytes > 0 && outcome.peakBytes < 512 << 20, "\(outcome)")
  }

  /// A head `HTTPResponse` cannot hold, as libcurl hands it over: a bad reply that names why,
  /// never a trap in swift-http-types (decision 2201).
  func badReply(_ head: String) async throws -> CourierError {
    let server = try LoopbackServer(
      .raw("HTTP/1.1 200 OK\r\n\(head)Content-Length: 2\r\nConnection: close\r\n\r\n{}"))
    defer { server.stop() }
    do {
      let (response, _) = try await CurlTransport().send(
        HTTPRequest(method: .get, url: server.url),
        options: TransportOptions(deadline: .seconds(20)))
      Issue.record("expected a bad reply, got \(response.status)")
      return CourierError(.unexpected)
    } catch let error as CourierError {
      return error
    }
  }

  @Test("a field name that is not a token is refused as a bad reply, naming the name")
  func fieldNameNotAToken() async throws {
    for name in ["Bad Name", "X(y)", "Caf\u{E9}", ""] {
      let error = try await badReply("\(name): x\r\n")
      #expect(error.kind == .invalidResponse, "\(name.debugDescription): \(error)")
      #expect(error.code == "reply_field_name_invalid", "\(name.debugDescription): \(error)")
      #expect(error.context == "GET /")
    }
  }

  @Test("65,535 header fields, one more than HTTPFields holds: a bad reply, not a trap")
  func tooManyFields() async throws {
    // 4 bytes a field: libcurl takes the whole head (its limit is on bytes, 300 KB).
    let error = try await badReply(
      String(repeating: "a:\r\n", count: HTTPResponse.maxReceivedFields - 1))
    #expect(error.kind == .invalidResponse, "\(error)")
    #expect(error.code == "reply_too_many_fields", "\(error)")
  }
}
