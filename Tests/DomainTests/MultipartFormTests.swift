import CourierDomain
import Foundation
import Testing

@Suite("MultipartForm")
struct MultipartFormTests {
  let boundary: MultipartBoundary

  init() throws { boundary = try MultipartBoundary("XyZ") }

  private func bytes(_ layout: MultipartBodyLayout) throws -> String {
    let body = try #require(layout.inMemoryBody)
    return String(decoding: body, as: UTF8.self)
  }

  @Test("golden bytes: a text field and an in-memory file, CRLF everywhere, close delimiter")
  func goldenBytes() throws {
    let form = MultipartForm([
      .text("title", "Hello, wörld"),
      .data("file", filename: "photo.jpg", contentType: "image/jpeg", data: Data("JPEG".utf8)),
    ])
    let layout = try form.layout(boundary: boundary)
    let expected =
      "--XyZ\r\n"
      + "Content-Disposition: form-data; name=\"title\"\r\n"
      + "\r\n"
      + "Hello, wörld\r\n"
      + "--XyZ\r\n"
      + "Content-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\n"
      + "Content-Type: image/jpeg\r\n"
      + "\r\n"
      + "JPEG\r\n"
      + "--XyZ--\r\n"
    #expect(try bytes(layout) == expected)
    #expect(layout.contentLength == Int64(expected.utf8.count))
    #expect(layout.contentType == "multipart/form-data; boundary=XyZ")
  }

  @Test("a file on disk becomes a file-range segment between in-memory segments")
  func fileSegment() throws {
    let url = URL(fileURLWithPath: "/data/photo.heic")
    let form = MultipartForm([
      .file("file", filename: "photo.heic", contentType: "image/heic", url: url, size: 1234),
      .text("title", "t"),
    ])
    let layout = try form.layout(boundary: boundary)
    #expect(layout.segments.count == 3)
    #expect(layout.segments[1] == .file(url, offset: 0, length: 1234, fileSize: 1234))
    let head =
      "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.heic\""
      + "\r\nContent-Type: image/heic\r\n\r\n"
    #expect(layout.segments[0] == .bytes(Data(head.utf8)))
    let tail = "\r\n--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nt\r\n--XyZ--\r\n"
    #expect(layout.segments[2] == .bytes(Data(tail.utf8)))
    #expect(layout.contentLength == Int64(head.utf8.count + 1234 + tail.utf8.count))
    #expect(layout.inMemoryBody == nil)
    #expect(!layout.isInMemory)
  }

  @Test("an empty form is just the close delimiter")
  func emptyForm() throws {
    #expect(try bytes(MultipartForm().layout(boundary: boundary)) == "--XyZ--\r\n")
  }

  @Test("an empty file keeps no file segment")
  func emptyFile() throws {
    let url = URL(fileURLWithPath: "/data/empty.bin")
    let form = MultipartForm([
      .file("f", filename: "empty.bin", contentType: "application/octet-stream", url: url, size: 0)
    ])
    let layout = try form.layout(boundary: boundary)
    #expect(layout.isInMemory)
    #expect(try bytes(layout).hasSuffix("\r\n\r\n\r\n--XyZ--\r\n"))
  }

  @Test("a file part without a media type is sent as application/octet-stream")
  func defaultMediaType() throws {
    let part = MultipartPart(
      name: "f", filename: "x", contentType: nil, content: .bytes(Data([1])))
    #expect(
      try bytes(MultipartForm([part]).layout(boundary: boundary)).contains(
        "Content-Type: application/octet-stream\r\n"))
  }

  @Test(
    "hostile filenames are escaped as browsers do and lose their directories",
    arguments: [
      ("a\"b.jpg", "a%22b.jpg"),
      ("evil\r\nX-Injected: 1.jpg", "evil%0D%0AX-Injected: 1.jpg"),
      ("evil\r\nContent-Type: text/html", "html"),
      ("line\nfeed", "line%0Afeed"),
      ("../../etc/passwd", "passwd"),
      ("..\\..\\windows\\system32\\cmd.exe", "cmd.exe"),
      ("C:\\Users\\me\\Pictures\\x.png", "x.png"),
      ("/abs/dir/photo.jpg", "photo.jpg"),
      ("mixed/dir\\name.gif", "name.gif"),
      ("😀 фото ملف.jpg", "😀 фото ملف.jpg"),
      ("\u{202E}gpj.exe", "\u{202E}gpj.exe"),
      ("tab\tname", "tab\tname"),
      ("semi; name=\"x\"", "semi; name=%22x%22"),
      ("%22 already", "%22 already"),
      (String(repeating: "é", count: 2000), String(repeating: "é", count: 2000)),
    ])
  func hostileFilenames(given: String, sent: String) throws {
    let form = MultipartForm([
      .data("file", filename: given, contentType: "image/jpeg", data: Data("x".utf8))
    ])
    let body = try bytes(form.layout(boundary: boundary))
    #expect(body.contains("; filename=\"\(sent)\"\r\nContent-Type: image/jpeg\r\n\r\nx\r\n"))
    // Exactly the headers we wrote: no line was injected.
    #expect(body.components(separatedBy: "\r\n").count == 7)
  }

  @Test(
    "filenames with nothing left after their directory are refused",
    arguments: ["", "dir/", "..", ".", "../..", "a\\"])
  func emptyFilenames(given: String) throws {
    let form = MultipartForm([
      .data("file", filename: given, contentType: "image/jpeg", data: Data())
    ])
    let error = try #require(throws: CourierError.self) { try form.layout(boundary: boundary) }
    #expect(error.kind == .invalidInput)
    #expect(error.code == "multipart_invalid_name")
    #expect(error.field == "file")
    #expect(error.userMessage.contains("filename of field \"file\""))
  }

  @Test(
    "names that cannot be sent safely are clear errors",
    arguments: [
      ("na\0me", "NUL"), ("bell\u{07}", "U+0007"), ("del\u{7F}", "U+007F"),
      ("back\\slash", "backslash"), ("trailing\\", "backslash"),
    ])
  func unsafeNames(name: String, mentioned: String) throws {
    let form = MultipartForm([.text(name, "v")])
    let error = try #require(throws: CourierError.self) { try form.layout(boundary: boundary) }
    #expect(error.kind == .invalidInput)
    #expect(error.code == "multipart_invalid_name")
    #expect(error.field == name)
    #expect(error.userMessage.contains(mentioned))
    #expect(!error.userMessage.contains("\0"))
  }

  @Test("a NUL in a filename is refused")
  func nulFilename() throws {
    let form = MultipartForm([
      .data("file", filename: "a\0.jpg", contentType: "image/jpeg", data: Data())
    ])
    let error = try #require(throws: CourierError.self) { try form.layout(boundary: boundary) }
    #expect(error.code == "multipart_invalid_name")
    #expect(error.userMessage.contains("filename"))
  }

  @Test("names are escaped like filenames, raw UTF-8 kept")
  func escapedNames() throws {
    let form = MultipartForm([.text("a\"b\r\nc 名前", "v")])
    #expect(
      try bytes(form.layout(boundary: boundary)).contains(
        "Content-Disposition: form-data; name=\"a%22b%0D%0Ac 名前\"\r\n\r\nv\r\n"))
  }

  @Test("a text value holding the delimiter is refused")
  func valueWithBoundary() throws {
    let form = MultipartForm([.text("note", "before\r\n--XyZ--\r\nafter")])
    let error = try #require(throws: CourierError.self) { try form.layout(boundary: boundary) }
    #expect(error.code == "multipart_invalid_value")
    #expect(error.field == "note")
  }

  @Test("a text value with CRLF and binary-looking content is kept as is")
  func valueKept() throws {
    let form = MultipartForm([.text("note", "a\r\n\r\n--notXyZ\r\nb")])
    #expect(
      try bytes(form.layout(boundary: boundary)).contains("\r\n\r\na\r\n\r\n--notXyZ\r\nb\r\n"))
  }

  @Test(
    "a media type that could end the header line is refused",
    arguments: ["image/jpeg\r\nX-Evil: 1", "image", "/jpeg", "image/", "imäge/jpeg", ""])
  func badContentType(contentType: String) throws {
    let form = MultipartForm([
      .data("file", filename: "x.jpg", contentType: contentType, data: Data())
    ])
    let error = try #require(throws: CourierError.self) { try form.layout(boundary: boundary) }
    #expect(error.code == "multipart_invalid_content_type")
    #expect(error.field == "file")
  }

  @Test("a boundary needing quotes is quoted in Content-Type, not in the body")
  func quotedBoundary() throws {
    let layout = try MultipartForm([.text("a", "b")]).layout(
      boundary: MultipartBoundary("with space:and=more"))
    #expect(layout.contentType == "multipart/form-data; boundary=\"with space:and=more\"")
    #expect(try bytes(layout).hasPrefix("--with space:and=more\r\n"))
  }
}
