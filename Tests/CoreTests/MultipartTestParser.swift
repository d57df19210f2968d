import Foundation

/// A strict multipart/form-data reader used ONLY by tests, to check our understanding of the
/// format (RFC 2046 §5.1.1, RFC 7578) against a real parser's published vectors.
///
/// It accepts leading CRLFs before the first delimiter, transport padding (spaces and tabs)
/// after a delimiter and an epilogue after the close delimiter; it rejects a missing first
/// delimiter, malformed header lines (bare CR, a name that is not a token, no colon), a body
/// that ends before the close delimiter, and content transfer encodings it does not implement
/// (RFC 7578 §4.7 deprecates them; the encoder never sends one).
struct MultipartTestParser {
  struct Part: Equatable {
    var headers: [(name: String, value: String)]
    var name: String?
    var filename: String?
    var contentType: String?
    var data: [UInt8]

    static func == (lhs: Part, rhs: Part) -> Bool {
      lhs.name == rhs.name && lhs.filename == rhs.filename && lhs.contentType == rhs.contentType
        && lhs.data == rhs.data
    }
  }

  enum Failure: Error, Equatable {
    case noInitialDelimiter
    case badDelimiterLine(offset: Int)
    case badHeader(offset: Int)
    case unterminatedHeaders
    case noCloseDelimiter
    case unsupportedTransferEncoding(String)
  }

  let boundary: [UInt8]

  init(boundary: String) { self.boundary = Array(boundary.utf8) }

  func parse(_ body: [UInt8]) throws -> [Part] {
    let dash = UInt8(ascii: "-")
    let delimiter = [dash, dash] + boundary
    var index = 0
    while body.count >= index + 2 && body[index] == 13 && body[index + 1] == 10 { index += 2 }
    guard starts(body, delimiter, at: index) else { throw Failure.noInitialDelimiter }
    index += delimiter.count
    var parts: [Part] = []
    while true {
      // After a delimiter: "--" closes; otherwise transport padding, then CRLF.
      if starts(body, [dash, dash], at: index) { return parts }
      while index < body.count && (body[index] == 0x20 || body[index] == 0x09) { index += 1 }
      guard starts(body, [13, 10], at: index) else { throw Failure.badDelimiterLine(offset: index) }
      index += 2
      var part = try readHeaders(body, &index)
      let next = [13, 10] + delimiter
      // A delimiter is one only when "--" or padding and CRLF follow it; "--boundaryQ" is data.
      var searchFrom = index
      var found: Int?
      while found == nil, let candidate = find(next, in: body, from: searchFrom) {
        if isDelimiterEnd(body, at: candidate + next.count) {
          found = candidate
        } else {
          searchFrom = candidate + 1
        }
      }
      guard let end = found else { throw Failure.noCloseDelimiter }
      part.data = Array(body[index..<end])
      parts.append(part)
      index = end + next.count
    }
  }

  private func readHeaders(_ body: [UInt8], _ index: inout Int) throws -> Part {
    var part = Part(headers: [], name: nil, filename: nil, contentType: nil, data: [])
    while true {
      guard let lineEnd = find([13, 10], in: body, from: index) else {
        throw Failure.unterminatedHeaders
      }
      let line = Array(body[index..<lineEnd])
      let lineStart = index
      index = lineEnd + 2
      if line.isEmpty { break }
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0,
        line[..<colon].allSatisfy(isToken), !line.contains(13), !line.contains(10)
      else { throw Failure.badHeader(offset: lineStart) }
      let name = String(decoding: line[..<colon], as: UTF8.self)
      let value = String(decoding: line[(colon + 1)...], as: UTF8.self)
        .trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
      part.headers.append((name, value))
    }
    for (name, value) in part.headers {
      switch name.lowercased() {
      case "content-disposition":
        let params = Self.parameters(Array(value.utf8))
        part.name = params["name"]
        part.filename = params["filename"]
      case "content-type":
        part.contentType = value
      case "content-transfer-encoding":
        if !["7bit", "8bit", "binary"].contains(value.lowercased()) {
          throw Failure.unsupportedTransferEncoding(value)
        }
      default: break
      }
    }
    return part
  }

  /// The `; key=value` parameters of a header value; quoted values have `\"` and `\\` unescaped.
  static func parameters(_ value: [UInt8]) -> [String: String] {
    var result: [String: String] = [:]
    var index = value.firstIndex(of: UInt8(ascii: ";")) ?? value.count
    while index < value.count {
      index += 1  // past ';'
      while index < value.count && (value[index] == 0x20 || value[index] == 0x09) { index += 1 }
      var key: [UInt8] = []
      while index < value.count && value[index] != UInt8(ascii: "=")
        && value[index] != UInt8(ascii: ";")
      {
        key.append(value[index])
        index += 1
      }
      var text: [UInt8] = []
      if index < value.count && value[index] == UInt8(ascii: "=") {
        index += 1
        if index < value.count && value[index] == UInt8(ascii: "\"") {
          index += 1
          while index < value.count && value[index] != UInt8(ascii: "\"") {
            if value[index] == UInt8(ascii: "\\") && index + 1 < value.count {
              index += 1
            }
            text.append(value[index])
            index += 1
          }
          index += 1  // closing quote
          while index < value.count && value[index] != UInt8(ascii: ";") { index += 1 }
        } else {
          while index < value.count && value[index] != UInt8(ascii: ";") {
            text.append(value[index])
            index += 1
          }
          while text.last == 0x20 || text.last == 0x09 { text.removeLast() }
        }
      }
      let keyText = String(decoding: key, as: UTF8.self).lowercased()
      if !keyText.isEmpty { result[keyText] = String(decoding: text, as: UTF8.self) }
    }
    return result
  }

  private func isDelimiterEnd(_ body: [UInt8], at start: Int) -> Bool {
    if starts(body, [45, 45], at: start) { return true }
    var index = start
    while index < body.count && (body[index] == 0x20 || body[index] == 0x09) { index += 1 }
    return starts(body, [13, 10], at: index)
  }

  private func isToken(_ byte: UInt8) -> Bool {
    byte > 0x20 && byte < 0x7F && !"()<>@,;:\\\"/[]?={}".utf8.contains(byte)
  }

  private func starts(_ body: [UInt8], _ prefix: [UInt8], at index: Int) -> Bool {
    body.count >= index + prefix.count && Array(body[index..<index + prefix.count]) == prefix
  }

  private func find(_ needle: [UInt8], in body: [UInt8], from start: Int) -> Int? {
    guard needle.count <= body.count else { return nil }
    var index = start
    while index + needle.count <= body.count {
      if body[index] == needle[0] && Array(body[index..<index + needle.count]) == needle {
        return index
      }
      index += 1
    }
    return nil
  }
}
