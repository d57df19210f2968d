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
  /// - Returns: the same text as `%.Nf` ("-0.5", "12", "inf", "18446744073709551616.0") for
  ///   every double.
  package func fixed(digits: Int) -> String {
    guard isFinite else { return isNaN ? "nan" : (self < 0 ? "-inf" : "inf") }
    let digits = Swift.min(Swift.max(digits, 0), 6)
    var scale: UInt64 = 1
    for _ in 0..<digits { scale *= 10 }
    let magnitude = Swift.abs(self)
    guard magnitude < 0x1p64 else {
      // An integer too large for UInt64: its exact decimal digits, then zeros after the point.
      let sign = sign == .minus ? "-" : ""
      let zeros = digits > 0 ? "." + String(repeating: "0", count: digits) : ""
      return sign + magnitude.exactIntegerDigits + zeros
    }
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

  /// The exact decimal digits of a finite double of at least 2^64 (an integer): its significand
  /// shifted left by its exponent in a little-endian number of base-10^9 limbs (35 at most, for
  /// `greatestFiniteMagnitude`'s 309 digits).
  private var exactIntegerDigits: String {
    let limbBase: UInt64 = 1_000_000_000
    let significand = significandBitPattern | (1 << UInt64(Self.significandBitCount))
    var limbs: [UInt64] = [significand % limbBase, significand / limbBase % limbBase]
    if significand >= limbBase * limbBase { limbs.append(significand / limbBase / limbBase) }
    var shift = Int(exponent) - Self.significandBitCount
    while shift > 0 {
      // A limb (below 10^9) times at most 2^32, plus a carry below 2^32, fits in 64 bits.
      let step = Swift.min(shift, 32)
      shift -= step
      var carry: UInt64 = 0
      for index in limbs.indices {
        let product = limbs[index] << UInt64(step) + carry
        limbs[index] = product % limbBase
        carry = product / limbBase
      }
      while carry > 0 {
        limbs.append(carry % limbBase)
        carry /= limbBase
      }
    }
    while limbs.count > 1, limbs.last == 0 { limbs.removeLast() }
    var text = String(limbs[limbs.count - 1])
    for limb in limbs.dropLast().reversed() {
      let part = String(limb)
      text += String(repeating: "0", count: 9 - part.count) + part
    }
    return text
  }
}
