import CourierCurl
import CourierDomain
import CourierPorts
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

/// The curl adapter's response sink against raw loopback replies: where each status's body
/// goes, and a 206 that does not continue the file (decision 2500).
@Suite("CurlTransport writes a response to a sink")
struct CurlResponseSinkTests {
  func folder() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-curl-sink-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
  }

  func send(_ reply: String, sink: ResponseSink) async throws -> (HTTPResponse, ResponseBody) {
    let server = try LoopbackServer(.raw(reply))
    defer { server.stop() }
    var options = TransportOptions(deadline: .seconds(10))
    options.responseSink = sink
    return try await CurlTransport().send(
      HTTPRequest(method: .get, url: server.url.appendingPathComponent("x")), body: nil,
      options: options)
  }

  @Test("a 200 replaces the file from byte 0, longer old bytes included; bytes stays empty")
  func whole() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("f")
    try Data(repeating: 0x41, count: 50).write(to: file)
    let (response, body) = try await send(
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789",
      sink: ResponseSink(file: file, offset: 50))
    #expect(response.status == .ok)
    #expect(body.file == file && body.count == 10 && body.bytes.isEmpty)
    #expect(try Data(contentsOf: file) == Data("0123456789".utf8))
  }

  @Test("a 206 starting at the sink's offset continues the file there")
  func continues() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("f")
    try Data("01234".utf8).write(to: file)
    let (response, body) = try await send(
      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 5-9/10\r\nContent-Length: 5\r\n\r\n56789",
      sink: ResponseSink(file: file, offset: 5))
    #expect(response.status.code == 206)
    #expect(body.count == 5)
    #expect(try Data(contentsOf: file) == Data("0123456789".utf8))
  }

  @Test("a 20 MiB 206 from an unaligned offset: every byte in place across the write-behind ranges")
  func largeContinues() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("f")
    let (start, length) = (3 * 1_048_576 + 7, 20 * 1_048_576 + 3)
    // Printable bytes that differ from place to place: a range written twice or skipped shows.
    let bytes: [UInt8] = (0..<(start + length)).map { (place: Int) -> UInt8 in
      UInt8(0x21 + (place * 7 + place / 4093) % 90)
    }
    let text = String(decoding: bytes, as: UTF8.self)
    let whole = Data(text.utf8)
    try whole.prefix(start).write(to: file)
    let last = start + length - 1
    let head =
      "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes \(start)-\(last)/\(last + 1)\r\n"
      + "Content-Length: \(length)\r\n\r\n"
    let (response, body) = try await send(
      head + String(text.dropFirst(start)), sink: ResponseSink(file: file, offset: Int64(start)))
    #expect(response.status.code == 206)
    #expect(body.count == length)
    #expect(try Data(contentsOf: file) == whole)
  }

  @Test("a 206 whose Content-Range starts elsewhere is a bad reply and writes nothing")
  func wrongContentRange() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("f")
    try Data("01234".utf8).write(to: file)
    await #expect {
      _ = try await send(
        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 4-9/10\r\nContent-Length: 6\r\n\r\n456789",
        sink: ResponseSink(file: file, offset: 5))
    } throws: { error in
      (error as? CourierError)?.code == "reply_content_range_mismatch"
    }
    #expect(try Data(contentsOf: file) == Data("01234".utf8))
  }

  @Test("an error reply's body stays in memory and the file is untouched")
  func errorInMemory() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("f")
    try Data("01234".utf8).write(to: file)
    let (response, body) = try await send(
      "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
      sink: ResponseSink(file: file, offset: 5))
    #expect(response.status == .notFound)
    #expect(body.file == nil && body.bytes == Data("not found".utf8))
    #expect(try Data(contentsOf: file) == Data("01234".utf8))
  }
}
