import CourierDomain
import Foundation
import Testing

/// python-multipart's published test vectors (tests/test_data/http in its 0.0.34 sdist,
/// Apache-2.0), read with the test-only parser: checks that our understanding of the format
/// matches a real parser's, then that the encoder's output parses under the same rules.
@Suite("python-multipart vectors")
struct MultipartVectorTests {
  static let directory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Crosscheck/vectors/python-multipart")

  struct Expected: Decodable {
    struct Part: Decodable {
      var name: String
      var type: String
      var file_name: String?
      var content_type: String?
      var data: String
    }
    var boundary: String
    var error: Int?
    var parts: [Part]?
  }

  static func load() throws -> [String: Expected] {
    let data = try Data(contentsOf: directory.appendingPathComponent("expected.json"))
    return try JSONDecoder().decode([String: Expected].self, from: data)
  }

  static func names() -> [String] { ((try? load()) ?? [:]).keys.sorted() }

  /// Vectors that use a Content-Transfer-Encoding (base64, quoted-printable): RFC 7578 §4.7
  /// deprecates them and the encoder never sends one, so the test parser does not decode them.
  static let notApplicable: Set = [
    "base64_encoding", "base64_encoding_whitespace", "mixed_plain_and_base64_encoding",
    "quoted_printable_encoding", "mixed_case_headers",
  ]

  @Test("the vectors are all there")
  func present() throws {
    #expect(try Self.load().count == 33)
  }

  @Test("each vector parses as python-multipart says", arguments: names())
  func vector(name: String) throws {
    let expected = try #require(try Self.load()[name])
    let body = try [UInt8](
      Data(contentsOf: Self.directory.appendingPathComponent("\(name).http")))
    // python-multipart reads this one in test_feed_blocks with the boundary "boundary"; its
    // YAML's "--boundary" is never used.
    let boundary = name == "single_field_blocks" ? "boundary" : expected.boundary
    let parser = MultipartTestParser(boundary: boundary)
    if Self.notApplicable.contains(name) {
      do {
        _ = try parser.parse(body)
        Issue.record("\(name) uses a transfer encoding and should have been refused")
      } catch MultipartTestParser.Failure.unsupportedTransferEncoding {
        // Not applicable, as expected.
      }
      return
    }
    if let offset = expected.error {
      #expect(throws: MultipartTestParser.Failure.self, "python-multipart fails at \(offset)") {
        try parser.parse(body)
      }
      return
    }
    let parts = try parser.parse(body)
    let wanted = try #require(expected.parts)
    #expect(parts.count == wanted.count)
    for (part, want) in zip(parts, wanted) {
      #expect(part.name == want.name)
      #expect(part.data == [UInt8](try #require(Data(base64Encoded: want.data))))
      if want.type == "file" {
        #expect(part.filename == want.file_name)
        if let type = want.content_type { #expect(part.contentType == type) }
      } else {
        #expect(part.filename == nil)
      }
    }
  }

  @Test("the encoder's hostile bodies read back under the same rules")
  func encoderRoundTrip() throws {
    let boundary = MultipartBoundary.random()
    let payload = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) } + [13, 10, 45, 45])
    let form = MultipartForm([
      .text("title", "line one\r\n--line two\r\n"),
      .text("名前 \"quoted\"\r\n", "ünïcödé"),
      .data("file", filename: "../../etc/pa\"ss\nwd", contentType: "image/png", data: payload),
      .text("empty", ""),
    ])
    let body = try #require(try form.layout(boundary: boundary).inMemoryBody)
    let parts = try MultipartTestParser(boundary: boundary.value).parse([UInt8](body))
    #expect(parts.map(\.name) == ["title", "名前 %22quoted%22%0D%0A", "file", "empty"])
    #expect(parts[0].data == Array("line one\r\n--line two\r\n".utf8))
    #expect(parts[1].data == Array("ünïcödé".utf8))
    #expect(parts[2].filename == "pa%22ss%0Awd")
    #expect(parts[2].contentType == "image/png")
    #expect(parts[2].data == [UInt8](payload))
    #expect(parts[3].data.isEmpty)
  }
}
