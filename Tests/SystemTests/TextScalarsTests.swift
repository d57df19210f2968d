import CourierSystem
import Foundation
import Testing

/// The text rules written out in place of Foundation's (decision 1414), checked against
/// Foundation itself: the tests link it, the modules no longer do.
@Suite("Text rules that replace Foundation's CharacterSet, String(format:) and NSString")
struct TextScalarsTests {
  /// Every scalar of every plane: the predicates agree with the sets they replace, but for two
  /// differences of Foundation's tables, where ours are the more exact: they hold all of plane 14
  /// as control characters (variation selectors 17 to 256 are marks), and their letters stop at
  /// an older Unicode (and skip some of plane 1's).
  @Test("each scalar predicate matches its CharacterSet on all of Unicode")
  func predicatesMatchCharacterSets() {
    var mismatches: [String] = []
    for value in UInt32(0)...0x10FFFF {
      guard let scalar = Unicode.Scalar(value) else { continue }
      let age = scalar.properties.age
      let oldLetter = value < 0x10000 && age.map { $0.major < 15 } ?? true
      let checks: [(String, Bool, Bool)] = [
        ("whitespaces", scalar.isSpaceOrTab, CharacterSet.whitespaces.contains(scalar)),
        (
          "whitespacesAndNewlines", scalar.isWhitespaceOrNewline,
          CharacterSet.whitespacesAndNewlines.contains(scalar)
        ),
        (
          "controlCharacters", scalar.isControlOrFormat,
          value >> 16 == 14
            ? scalar.isControlOrFormat : CharacterSet.controlCharacters.contains(scalar)
        ),
        (
          "alphanumerics", scalar.isLetterMarkOrNumber,
          oldLetter ? CharacterSet.alphanumerics.contains(scalar) : scalar.isLetterMarkOrNumber
        ),
      ]
      for (set, ours, theirs) in checks where ours != theirs && mismatches.count < 20 {
        mismatches.append(
          "U+\(String(value, radix: 16)) \(set): ours \(ours), Foundation \(theirs)")
      }
    }
    #expect(mismatches.isEmpty, "\(mismatches)")
  }

  static let texts = [
    "", " ", "\t", "  a  ", "\ta b\t", "a", "\u{00A0}x\u{2003}", "\n x \n", "\r\n", "é ",
    " \u{2028}line\u{2029} ", "\u{0085}nel", "x\u{200B}", "  \u{3000}全角\u{3000}",
  ]

  @Test("trimming matches trimmingCharacters(in:)", arguments: texts)
  func trimming(_ text: String) {
    #expect(text.trimmingSpacesAndTabs() == text.trimmingCharacters(in: .whitespaces))
    #expect(
      text.trimmingWhitespaceAndNewlines()
        == text.trimmingCharacters(in: .whitespacesAndNewlines))
    let substring = text[...]
    #expect(substring.trimmingSpacesAndTabs() == text.trimmingCharacters(in: .whitespaces))
  }

  @Test("fixed(digits:) prints what %.Nf prints")
  func fixedMatchesPrintf() {
    var generator = SystemRandomNumberGenerator()
    var values: [Double] = [
      0, -0.0, 0.5, 1.5, 2.5, 3.5, -2.5, 0.05, 0.15, 0.25, 0.35, 1.005, 2.675, 9.995, 99.95,
      0.9995, 0.99999, 1e-7, -1e-7, 123_456.789, 1e15, 4_503_599_627_370_495.5, 9.0e18,
    ]
    for _ in 0..<20_000 {
      values.append(Double.random(in: -10_000...10_000, using: &generator))
      values.append(
        Double(bitPattern: UInt64.random(in: 0...0x43E0_0000_0000_0000, using: &generator)))
      values.append(Double(Int.random(in: -100_000...100_000, using: &generator)) / 1000)
    }
    var mismatches: [String] = []
    for value in values {
      for digits in 0...3 {
        let ours = value.fixed(digits: digits)
        let theirs = String(format: "%.\(digits)f", value)
        if ours != theirs, mismatches.count < 20 {
          mismatches.append("\(value) %.\(digits)f: ours \(ours), printf \(theirs)")
        }
      }
    }
    #expect(mismatches.isEmpty, "\(mismatches)")
    #expect(Double.infinity.fixed(digits: 1) == "inf")
    #expect(Double.nan.fixed(digits: 1) == "nan")
  }

  @Test("upperHex(digits:) prints what %0NX prints")
  func upperHexMatchesPrintf() {
    for value: UInt32 in [0, 1, 0x1B, 0x7F, 0xFF, 0x100, 0xABCD, 0x10FFFF] {
      #expect(value.upperHex(digits: 2) == String(format: "%02X", value))
      #expect(value.upperHex(digits: 4) == String(format: "%04X", value))
    }
  }
}
