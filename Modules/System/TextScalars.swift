/// The few text rules Foundation's `CharacterSet` gave Courier, written out so that Courier's
/// modules need only FoundationEssentials (Docs/decisions/1414). Each matches the Foundation set
/// it replaces for the scalars Courier reads (HTTP header values, server messages, codes).
extension Unicode.Scalar {
  /// `CharacterSet.whitespaces`: a tab, a space separator (category Zs) or U+200B ZERO WIDTH
  /// SPACE.
  package var isSpaceOrTab: Bool {
    self == "\t" || value == 0x200B || properties.generalCategory == .spaceSeparator
  }

  /// `CharacterSet.whitespacesAndNewlines`: the above, or a line or paragraph break
  /// (U+000A–U+000D, U+0085, U+2028, U+2029).
  package var isWhitespaceOrNewline: Bool {
    isSpaceOrTab || (0x0A...0x0D).contains(value) || value == 0x85 || value == 0x2028
      || value == 0x2029
  }

  /// `CharacterSet.controlCharacters`: categories Cc and Cf. (Foundation's set also holds all of
  /// plane 14, variation selectors 17 to 256 included, which are marks: those are kept here.)
  package var isControlOrFormat: Bool {
    switch properties.generalCategory {
    case .control, .format: true
    default: false
    }
  }

  /// `CharacterSet.alphanumerics`: categories L, M and N (of the standard library's Unicode
  /// version, newer than Foundation's tables: letters those lack are letters here).
  package var isLetterMarkOrNumber: Bool {
    switch properties.generalCategory {
    case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
      .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
      true
    default: false
    }
  }
}

extension StringProtocol {
  /// The text without leading and trailing tabs and spaces (`trimmingCharacters(in:
  /// .whitespaces)`).
  package func trimmingSpacesAndTabs() -> String {
    trimmingScalars(where: \.isSpaceOrTab)
  }

  /// The text without leading and trailing white space and line breaks
  /// (`trimmingCharacters(in: .whitespacesAndNewlines)`).
  package func trimmingWhitespaceAndNewlines() -> String {
    trimmingScalars(where: \.isWhitespaceOrNewline)
  }

  private func trimmingScalars(where trimmed: (Unicode.Scalar) -> Bool) -> String {
    let scalars = unicodeScalars
    guard let first = scalars.firstIndex(where: { !trimmed($0) }),
      let last = scalars.lastIndex(where: { !trimmed($0) })
    else { return "" }
    var result = String.UnicodeScalarView()
    result.append(contentsOf: scalars[first...last])
    return String(result)
  }
}

extension UInt32 {
  /// The value in upper-case hexadecimal, zero-padded to `digits` (`%0NX`).
  /// - Parameter digits: the least number of digits.
  /// - Returns: the digits.
  package func upperHex(digits: Int) -> String {
    let text = String(self, radix: 16, uppercase: true)
    return String(repeating: "0", count: Swift.max(0, digits - text.count)) + text
  }
}

extension Double {
  /// The value with `digits` digits after the point, rounded as `%.Nf` rounds (to nearest from
  /// the exact binary value, a tie to even), for the durations and sizes Courier prints: "1.2 s",
  /// "340 ms".
  /// - Parameter digits: digits after the point, 0 to 6.
  /// - Returns: the same text as `%.Nf` ("-0.5", "12", "inf") for any magnitude below 2^63.
  package func fixed(digits: Int) -> String {
    guard isFinite else { return isNaN ? "nan" : (self < 0 ? "-inf" : "inf") }
    let digits = Swift.min(Swift.max(digits, 0), 6)
    var scale: UInt64 = 1
    for _ in 0..<digits { scale *= 10 }
    let magnitude = Swift.abs(self)
    guard magnitude < 9.2e18 else { return "\(self)" }
    // The whole and fractional parts are exact, and so is the product's rounding error (a fused
    // multiply-add), which settles a product that rounded onto a tie.
    var whole = UInt64(magnitude.rounded(.towardZero))
    let fraction = magnitude - Double(whole)
    let product = fraction * Double(scale)
    let residual = (-product).addingProduct(fraction, Double(scale))
    var units = product.rounded(.towardZero)
    let rest = product - units
    let lastIsOdd = digits == 0 ? whole % 2 == 1 : units.truncatingRemainder(dividingBy: 2) == 1
    if rest > 0.5 || (rest == 0.5 && (residual > 0 || (residual == 0 && lastIsOdd))) {
      units += 1
    }
    var small = UInt64(units)
    if small >= scale {
      small -= scale
      whole += 1
    }
    let sign = sign == .minus ? "-" : ""
    guard digits > 0 else { return sign + String(whole) }
    let text = String(small)
    return sign + String(whole) + "." + String(repeating: "0", count: digits - text.count) + text
  }
}
