import CourierSystem
import CourierTestSupport
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

  /// Values `fixed(digits:)` once printed wrongly, or that sit on its edges: ties, the limits of
  /// the UInt64 path (2^53, 2^63, 2^64), the largest and smallest doubles. A value that ever
  /// fails joins this list.
  static let fixedRows: [Double] = [
    0, -0.0, 0.5, 1.5, 2.5, 3.5, -2.5, 0.05, 0.15, 0.25, 0.35, 1.005, 2.675, 9.995, 99.95,
    0.9995, 0.99999, 0.0000005, 0.0000015, 0.0000025, 1e-7, -1e-7, 123_456.789, 1e15,
    4_503_599_627_370_495.5, 0x1p52 + 0.5, 0x1p53, 0x1p53 + 2, 9.0e18,
    // Once printed as 9.202733093465086e+18 (a clean-clone CI run, issue 24).
    9.202733093465086e+18, -9.202733093465086e+18,
    0x1p63, 0x1p63 - 1024, 0x1p63 + 2048, 0x1p64, 0x1p64 - 2048, 0x1p64 + 4096, -0x1p64,
    1e19, 1e22, 1e23, 1e300, -1e300, Double.greatestFiniteMagnitude,
    -Double.greatestFiniteMagnitude, Double.leastNormalMagnitude, Double.leastNonzeroMagnitude,
    -Double.leastNonzeroMagnitude, Double(bitPattern: 0x000F_FFFF_FFFF_FFFF),
  ]

  @Test("fixed(digits:) prints what %.Nf prints: the rows and seeded draws")
  func fixedMatchesPrintf() {
    var generator = SplitMix64(testSeed: 0x7E47_5CA1_A125)
    var values = Self.fixedRows
    // A few thousand draws; the long search is the fuzz target fixed-digits (scripts/fuzz).
    for _ in 0..<1_500 {
      values.append(Double.random(in: -10_000...10_000, using: &generator))
      values.append(
        Double(bitPattern: UInt64.random(in: 0...0x43E0_0000_0000_0000, using: &generator)))
      values.append(
        Double(bitPattern: UInt64.random(in: 0...0xFFEF_FFFF_FFFF_FFFF, using: &generator)))
      values.append(Double(Int.random(in: -100_000...100_000, using: &generator)) / 1000)
    }
    var mismatches: [String] = []
    for value in values {
      for digits in 0...6 {
        let ours = value.fixed(digits: digits)
        let theirs = String(format: "%.\(digits)f", value)
        if ours != theirs, mismatches.count < 20 {
          mismatches.append("\(value) %.\(digits)f: ours \(ours), printf \(theirs)")
        }
      }
    }
    #expect(mismatches.isEmpty, "\(generator.seedDescription): \(mismatches)")
    #expect(Double.infinity.fixed(digits: 1) == "inf")
    #expect((-Double.infinity).fixed(digits: 1) == "-inf")
    #expect(Double.nan.fixed(digits: 1) == "nan")
    #expect(9.202733093465086e+18.fixed(digits: 0) == "9202733093465085952")
  }

  @Test("upperHex(digits:) prints what %0NX prints")
  func upperHexMatchesPrintf() {
    for value: UInt32 in [0, 1, 0x1B, 0x7F, 0xFF, 0x100, 0xABCD, 0x10FFFF] {
      #expect(value.upperHex(digits: 2) == String(format: "%02X", value))
      #expect(value.upperHex(digits: 4) == String(format: "%04X", value))
    }
  }
}
