import CourierCore
import CourierDomain
import CourierSystem
import CourierTestSupport
import Foundation
import Testing

/// Bodies written by the Swift encoder must read the same in three independent real parsers:
/// python-multipart (Starlette, FastAPI), werkzeug (Flask) and Go's mime/multipart. The script
/// Tests/Crosscheck/crosscheck.sh builds its venv and Go helper on first use; if it cannot, this
/// test fails and says why.
@Suite("Multipart cross-check with real parsers")
struct MultipartCrosscheckTests {
  struct Part: Codable, Equatable, CustomStringConvertible {
    var name: String
    var filename: String?
    var content_type: String?
    var size: Int64
    var sha256: String

    var description: String {
      "\(name) | \(filename ?? "-") | \(content_type ?? "-") | \(size) | \(sha256.prefix(12))"
    }
  }

  enum Outcome: Decodable, Equatable {
    case parts([Part])
    case error(String)

    init(from decoder: any Decoder) throws {
      if let parts = try? [Part](from: decoder) {
        self = .parts(parts)
      } else {
        self = .error(try [String: String](from: decoder)["error"] ?? "unreadable result")
      }
    }
  }

  /// One body to check: the form and what every parser should report.
  struct Case {
    var id: String
    var form: MultipartForm
    var boundary: MultipartBoundary
    var expected: [Part]
  }

  static let script = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Crosscheck/crosscheck.sh")

  static func expect(
    _ name: String, _ filename: String?, _ contentType: String?, _ bytes: [UInt8]
  ) -> Part {
    Part(
      name: name, filename: filename, content_type: contentType, size: Int64(bytes.count),
      sha256: SHA256.hex(SHA256.hash(Data(bytes))))
  }

  /// werkzeug's parse_options_header turns `%22` back into `"` in every parameter (browsers'
  /// escape); the other parsers keep it. Everything else must be identical.
  static func asWerkzeugReads(_ part: Part) -> Part {
    var part = part
    part.name = part.name.replacingOccurrences(of: "%22", with: "\"")
    part.filename = part.filename?.replacingOccurrences(of: "%22", with: "\"")
    return part
  }

  func cases(_ scratch: ScratchDirectory) throws -> [Case] {
    let photoBytes = [0xFF, 0xD8, 0xFF, 0xE0] + patternBytes(2 * 1024 * 1024 + 17, seed: 7)
    let photo = try scratch.file("IMG 0001 été.jpg", photoBytes)
    let small = patternBytes(3000, seed: 3) + Array("\r\n--\r\n--".utf8)
    let title = "Vacances d'été 🌴\r\n--not-a-boundary\r\n"
    let longName = String(repeating: "long-", count: 200) + ".png"
    let binary: [UInt8] = [0, 13, 10, 45, 45, 13, 10, 13, 10, 255, 254]

    var hostile = MultipartForm()
    var hostileExpected: [Part] = []
    func add(_ part: MultipartPart, _ expected: Part) {
      hostile.append(part)
      hostileExpected.append(expected)
    }
    add(.text("title", title), Self.expect("title", nil, nil, Array(title.utf8)))
    add(.text("a\"b", "q"), Self.expect("a%22b", nil, nil, Array("q".utf8)))
    add(.text("cr\rlf\nname", "x"), Self.expect("cr%0Dlf%0Aname", nil, nil, Array("x".utf8)))
    add(.text("名前 שם", "rtl"), Self.expect("名前 שם", nil, nil, Array("rtl".utf8)))
    add(.text("tab\tname", ""), Self.expect("tab\tname", nil, nil, []))
    add(.text("semi;colon=x", "v"), Self.expect("semi;colon=x", nil, nil, Array("v".utf8)))
    add(
      .data("file1", filename: "../../etc/passwd", contentType: "text/plain", data: Data(small)),
      Self.expect("file1", "passwd", "text/plain", small))
    add(
      .data(
        "file2", filename: "C:\\Users\\me\\evil\"name\r\n.jpg", contentType: "image/jpeg",
        data: Data(small)),
      Self.expect("file2", "evil%22name%0D%0A.jpg", "image/jpeg", small))
    add(
      .data(
        "file3", filename: "😀 фото \u{202E}gpj.exe", contentType: "application/octet-stream",
        data: Data(small)),
      Self.expect("file3", "😀 фото \u{202E}gpj.exe", "application/octet-stream", small))
    add(
      .data("file4", filename: longName, contentType: "image/png", data: Data(small)),
      Self.expect("file4", longName, "image/png", small))
    add(
      .data(
        "file5", filename: "semi; name=\"x\"; filename=y", contentType: "image/gif",
        data: Data(small)),
      Self.expect("file5", "semi; name=%22x%22; filename=y", "image/gif", small))
    add(
      .data("file6", filename: "literal%22.txt", contentType: "text/plain", data: Data(small)),
      Self.expect("file6", "literal%22.txt", "text/plain", small))
    add(
      .data("empty", filename: "empty.bin", contentType: "application/octet-stream", data: Data()),
      Self.expect("empty", "empty.bin", "application/octet-stream", []))
    add(
      MultipartPart(
        name: "blob", filename: nil, contentType: "application/octet-stream",
        content: .bytes(Data(binary))),
      Self.expect("blob", nil, "application/octet-stream", binary))

    return [
      Case(
        id: "photo",
        form: MultipartForm([.text("title", "Beach"), try .file("file", at: photo)]),
        boundary: .random(),
        expected: [
          Self.expect("title", nil, nil, Array("Beach".utf8)),
          Self.expect("file", "IMG 0001 été.jpg", "image/jpeg", photoBytes),
        ]),
      Case(id: "hostile", form: hostile, boundary: .random(), expected: hostileExpected),
      Case(
        id: "quoted-boundary", form: MultipartForm([.text("k", "v")]),
        boundary: try MultipartBoundary("with space:and=more'()+_,-./?x"),
        expected: [Self.expect("k", nil, nil, Array("v".utf8))]),
      Case(
        id: "webkit-style-boundary", form: MultipartForm([.text("k", "v")]),
        boundary: try MultipartBoundary("----WebKitFormBoundary7MA4YWxkTrZu0gW"),
        expected: [Self.expect("k", nil, nil, Array("v".utf8))]),
      Case(id: "empty-form", form: MultipartForm(), boundary: .random(), expected: []),
    ]
  }

  @Test("python-multipart, werkzeug and Go read every body as the Swift side expects")
  func crosscheck() async throws {
    let scratch = try ScratchDirectory()
    let cases = try cases(scratch)
    // Files always, with small chunks, so the path a real upload takes is the one checked.
    let writer = MultipartBodyWriter(
      directory: scratch.url, chunkSize: 64 * 1024, inMemoryThreshold: 0)
    var manifest: [[String: String]] = []
    for item in cases {
      let layout = try item.form.layout(boundary: item.boundary)
      let body = try await writer.makeBody(layout)
      let url = try #require(body.fileURL)
      #expect(try Data(contentsOf: url).count == Int(layout.contentLength))
      manifest.append(["id": item.id, "content_type": body.contentType, "path": url.path])
    }
    let manifestURL = scratch.url.appendingPathComponent("manifest.json")
    try JSONSerialization.data(withJSONObject: ["bodies": manifest]).write(to: manifestURL)

    let script = Self.script.path
    let manifestPath = manifestURL.path
    let (status, stdout, stderr) = try await offPool {
      try Self.run(script, manifestPath, in: scratch)
    }
    guard status == 0 || status == 1 else {
      let why =
        "crosscheck.sh could not run the parsers (exit \(status)); it needs python3 with venv, "
        + "PyPI (first run) and golang-go:\n\(stderr)"
      Issue.record(Comment(rawValue: why))
      return
    }
    let results = try JSONDecoder().decode(
      [String: [String: Outcome]].self, from: Data(stdout.utf8))
    for item in cases {
      let outcomes = try #require(results[item.id], "no result for \(item.id)")
      #expect(Set(outcomes.keys) == ["python-multipart", "werkzeug", "go"])
      for (parser, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
        let expected =
          parser == "werkzeug" ? item.expected.map(Self.asWerkzeugReads) : item.expected
        #expect(outcome == .parts(expected), "\(parser) read \(item.id) differently")
      }
    }
    #expect(status == 0, "the parsers disagree: \(stderr)")
  }

  private static func run(_ script: String, _ manifest: String, in scratch: ScratchDirectory)
    throws -> (
      Int32, String, String
    )
  {
    let out = scratch.url.appendingPathComponent("crosscheck.out")
    let err = scratch.url.appendingPathComponent("crosscheck.err")
    try Data().write(to: out)
    try Data().write(to: err)
    let process = Process()
    // Bounded: a first run creates the venv (~20 s); a hung pip must not hang the suite.
    process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
    process.arguments = ["600", "/bin/bash", script, manifest]
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    try process.run()
    process.waitUntilExit()
    return (
      process.terminationStatus, try String(contentsOf: out, encoding: .utf8),
      try String(contentsOf: err, encoding: .utf8)
    )
  }
}
