import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a server said in an error body, from `{code, message}`, RFC 9457
/// `application/problem+json`, or neither.
package struct ServerProblem: Sendable, Equatable {
  /// The machine-readable code.
  package var code: String?
  /// The message for a person, plain text only.
  package var message: String?
  /// The field a validation error names.
  package var field: String?
  /// The server's current record, for conflicts.
  package var current: JSONValue?

  /// Creates a problem.
  /// - Parameters:
  ///   - code: the code.
  ///   - message: the plain-text message.
  ///   - field: the field.
  ///   - current: the current record.
  package init(
    code: String? = nil, message: String? = nil, field: String? = nil, current: JSONValue? = nil
  ) {
    self.code = code
    self.message = message
    self.field = field
    self.current = current
  }

  /// Reads an error body. Never throws: garbage, HTML or an empty body give an empty problem.
  /// - Parameters:
  ///   - body: the body bytes.
  ///   - contentType: the `Content-Type` header, if any.
  /// - Returns: what could be read.
  package static func decode(_ body: Data, contentType: String?) -> ServerProblem {
    guard !body.isEmpty, body.count <= 1 << 20,
      let json = try? JSONValue(parsing: body),
      case .object = json
    else { return ServerProblem() }
    let isProblem =
      contentType?.lowercased().contains("problem+json") == true
      || json["type"] != nil || json["detail"] != nil
    var problem = ServerProblem()
    problem.code = json["code"]?.stringValue.flatMap(sanitizeCode)
    let candidates: [JSONValue?] =
      isProblem
      ? [json["detail"], json["message"], json["title"]] : [json["message"], json["detail"]]
    problem.message = candidates.lazy.compactMap { $0?.stringValue.flatMap(plainText) }.first
    problem.field = json["field"]?.stringValue.flatMap(plainText)
    problem.current = json["current"]
    return problem
  }

  /// Keeps a code only when it looks like one (`image_too_large`).
  static func sanitizeCode(_ code: String) -> String? {
    guard !code.isEmpty, code.count <= 100,
      code.unicodeScalars.allSatisfy({
        $0.isLetterMarkOrNumber || "_-.:/".unicodeScalars.contains($0)
      })
    else { return nil }
    return code
  }

  /// Keeps a message only when it is plain text fit for a person: no markup, no control
  /// characters, trimmed and bounded.
  /// - Parameter text: the server's text.
  /// - Returns: the text, or nil when it is not fit to show.
  package static func plainText(_ text: String) -> String? {
    let trimmed = text.trimmingWhitespaceAndNewlines()
    guard !trimmed.isEmpty else { return nil }
    let lowered = trimmed.lowercased()
    if lowered.contains("<html") || lowered.contains("<!doctype") || lowered.contains("<body")
      || containsTag(lowered)
    {
      return nil
    }
    let cleaned = String(
      String.UnicodeScalarView(
        trimmed.unicodeScalars.map {
          $0.isControlOrFormat ? " " : $0
        }))
    return cleaned.count > 300 ? String(cleaned.prefix(299)) + "…" : cleaned
  }
  /// Whether lower-cased text holds something shaped like a tag: `<`, then a letter, `/` or `!`,
  /// then a `>` later on (the pattern `<[a-z/!][^>]*>`).
  package static func containsTag(_ lowered: String) -> Bool {
    let bytes = Array(lowered.utf8)
    var index = 0
    while index + 2 < bytes.count {
      if bytes[index] == UInt8(ascii: "<") {
        let next = bytes[index + 1]
        if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(next) || next == UInt8(ascii: "/")
          || next == UInt8(ascii: "!")
        {
          // [^>]* then ">": any later ">" ends such a match.
          return bytes[(index + 2)...].contains(UInt8(ascii: ">"))
        }
      }
      index += 1
    }
    return false
  }
}
