/// The boundary of a multipart body (RFC 2046 §5.1.1): 1 to 70 characters from `bchars`, not
/// ending with a space. A generated one carries 128 random bits, so no file can contain it
/// except by a chance of 2⁻¹²⁸.
package struct MultipartBoundary: Sendable, Hashable, CustomStringConvertible {
  /// The boundary's text, as it appears after `--` in the body.
  package let value: String

  /// The prefix of generated boundaries, so a body is recognisable in a capture.
  package static let generatedPrefix = "CourierFormBoundary"

  /// Creates a boundary after checking it against RFC 2046's grammar.
  /// - Parameter value: the boundary's text.
  /// - Throws: `CourierError` `invalidInput` with code `multipart_invalid_boundary` naming the
  ///   problem.
  package init(_ value: String) throws {
    if let problem = Self.problem(with: value) {
      throw CourierError(
        .invalidInput, code: "multipart_invalid_boundary",
        serverMessage: "The multipart boundary \"\(value)\" is invalid: \(problem).",
        context: "multipart boundary")
    }
    self.value = value
  }

  private init(unchecked value: String) { self.value = value }

  /// A fresh boundary of 128 random bits, hex-encoded after `generatedPrefix` (51 characters).
  /// - Parameter generator: the source of randomness (the system's by default; a seeded one in
  ///   tests).
  /// - Returns: the boundary.
  package static func random<G: RandomNumberGenerator>(using generator: inout G)
    -> MultipartBoundary
  {
    let digits = Array("0123456789abcdef".utf8)
    var text = Array(generatedPrefix.utf8)
    for _ in 0..<2 {
      let word = generator.next() as UInt64
      for shift in stride(from: 60, through: 0, by: -4) {
        text.append(digits[Int((word >> UInt64(shift)) & 0xF)])
      }
    }
    return MultipartBoundary(unchecked: String(decoding: text, as: UTF8.self))
  }

  /// A fresh boundary from the system's cryptographic generator.
  /// - Returns: the boundary.
  package static func random() -> MultipartBoundary {
    var generator = SystemRandomNumberGenerator()
    return random(using: &generator)
  }

  /// What is wrong with a candidate boundary, if anything.
  /// - Parameter value: the candidate.
  /// - Returns: a short explanation, or nil when the boundary is valid.
  package static func problem(with value: String) -> String? {
    let bytes = Array(value.utf8)
    if bytes.isEmpty { return "it is empty" }
    if bytes.count > 70 { return "it is \(bytes.count) bytes long, more than 70" }
    if let bad = bytes.first(where: { !isBChar($0) }) {
      return "byte 0x\(String(bad, radix: 16, uppercase: true)) is not allowed (RFC 2046 bchars)"
    }
    if bytes.last == UInt8(ascii: " ") { return "it ends with a space" }
    return nil
  }

  /// Whether the boundary must be quoted in a `Content-Type` parameter: it holds a character
  /// that is a `tspecial` (RFC 2045) or a space.
  package var needsQuoting: Bool {
    value.utf8.contains { !isTokenChar($0) }
  }

  /// The boundary as a `Content-Type` parameter value, quoted when needed.
  package var parameterValue: String { needsQuoting ? "\"\(value)\"" : value }

  /// The boundary's text.
  package var description: String { value }

  static func isBChar(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "A")...UInt8(ascii: "Z"):
      return true
    default:
      return "'()+_,-./:=? ".utf8.contains(byte)
    }
  }
}

/// A `token` character of RFC 2045: printable ASCII but no space and no `tspecials`.
func isTokenChar(_ byte: UInt8) -> Bool {
  byte > 0x20 && byte < 0x7F && !"()<>@,;:\\\"/[]?=".utf8.contains(byte)
}
