import CourierCore
import CourierCurl
import CourierDomain
import CourierPorts
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

/// How the libcurl adapter and the retry step take a reply framed wrongly (decisions 2434,
/// 2436): a reply cut short is asked for again once when the request only reads, never when
/// it writes.
@Suite("CurlTransport and the framing of a reply")
struct CurlFramingTests {
  /// Four attempts with waits of milliseconds: what a lost connection would get.
  static func retrying() -> RetryingTransport<ContinuousClock> {
    RetryingTransport(
      CurlTransport(),
      executor: RetryExecutor(
        policy: RetryPolicy(
          maxAttempts: 4, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20)),
        clock: ContinuousClock()))
  }

  @Test(
    "a reply cut short: a GET is asked for once more, a write is not sent again",
    arguments: [
      (HTTPRequest.Method.get, 2), (.post, 1), (.put, 1), (.patch, 1), (.delete, 1),
    ])
  func truncatedRetry(_ row: (method: HTTPRequest.Method, requests: Int)) async throws {
    let server = try LoopbackServer(.closeMidBody)
    defer { server.stop() }
    let transport = Self.retrying()
    let sendsBody = row.method != .get && row.method != .delete
    do {
      let (response, _) = try await transport.send(
        HTTPRequest(method: row.method, url: server.url.appendingPathComponent("x")),
        body: sendsBody ? .bytes(Data("{}".utf8)) : nil,
        options: TransportOptions(deadline: .seconds(10)))
      Issue.record("\(row.method): expected a failure, got \(response.status)")
    } catch let error as CourierError {
      #expect(error.code == "reply_truncated", "\(row.method): \(error)")
      #expect(error.attempts == row.requests, "\(row.method): \(error)")
    }
    #expect(server.acceptedCount == row.requests, "\(row.method)")
  }

  /// The reply a loopback server sends, as this adapter takes it.
  static func get(_ reply: String) async throws -> (HTTPResponse, ResponseBody) {
    let server = try LoopbackServer(.raw(reply))
    defer { server.stop() }
    return try await CurlTransport().send(
      HTTPRequest(method: .get, url: server.url.appendingPathComponent("x")),
      options: TransportOptions(deadline: .seconds(10)))
  }

  static func failure(_ reply: String) async throws -> CourierError {
    do {
      let (response, _) = try await get(reply)
      Issue.record("expected a failure, got \(response.status)")
      return CourierError(.unexpected)
    } catch let error as CourierError {
      return error
    }
  }

  @Test("trailers: the final reply's, in order, apart from its fields; none is nil")
  func trailers() async throws {
    let (response, body) = try await Self.get(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
        + "Connection: close\r\n\r\n5\r\nhello\r\n0\r\nA: 1\r\nB:  2 \r\nA: 3\r\n\r\n")
    #expect(response.status == 200)
    #expect(body.bytes == Data("hello".utf8))
    #expect(response.headerFields.map(\.name.rawName) == ["Transfer-Encoding", "Connection"])
    let trailers = try #require(body.trailerFields)
    #expect(trailers.map { "\($0.name.rawName)=\($0.value)" } == ["A=1", "B=2", "A=3"])
    let (_, empty) = try await Self.get(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Sum: 0\r\n\r\n")
    #expect(empty.bytes.isEmpty)
    #expect(empty.trailerFields == [.named("X-Sum"): "0"])
    let (_, none) = try await Self.get(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
    #expect(none.bytes == Data("ok".utf8))
    #expect(none.trailerFields == nil)
  }

  @Test("a trailer field whose name is not a token is a bad reply, as a header field's is")
  func trailerNameNotAToken() async throws {
    let error = try await Self.failure(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nBad Name: x\r\n\r\n")
    #expect(error.code == "reply_field_name_invalid", "\(error)")
  }

  @Test("the status line after an interim 100 is checked too")
  func statusLineAfterContinue() async throws {
    let error = try await Self.failure(
      "HTTP/1.1 100 Continue\r\n\r\nHttp/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    #expect(error.code == "reply_status_line_invalid", "\(error)")
    #expect(error.userMessage == "The server sent a reply that couldn't be understood.")
    #expect(error.underlying?.contains("Http/1.1 200 OK") == true, "\(error)")
  }

  @Test("a download whose reply is bad leaves no file: the destination keeps what it had")
  func badDownload() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-framing-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let destination = directory.appendingPathComponent("out.txt")
    try Data("before".utf8).write(to: destination)
    // libcurl reads the last length (10 bytes) and calls it a success.
    let server = try LoopbackServer(
      .raw("HTTP/1.1 200 OK\r\nContent-Length: 20\r\nContent-Length: 10\r\n\r\n0123456789"))
    defer { server.stop() }
    do {
      let response = try await CurlTransport().download(
        HTTPRequest(method: .get, url: server.url), to: destination,
        options: TransportOptions(deadline: .seconds(10)))
      Issue.record("expected a failure, got \(response.status)")
    } catch let error as CourierError {
      #expect(error.code == "reply_length_conflict", "\(error)")
    }
    #expect(try Data(contentsOf: destination) == Data("before".utf8))
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.txt"])
  }
}
