/// Numbers as JSON spells them: what the domain's `JSONNumber` asks of its text.
package enum JSONNumberText {
  /// Whether a text is one JSON number (RFC 8259's grammar: `-0.5e+3`, not `+1`, `.5`, `1.`,
  /// `01`, `NaN`), with nothing around it.
  /// - Parameter text: the text.
  /// - Returns: true when it is.
  package static func isValid(_ text: String) -> Bool {
    guard let first = text.utf8.first, first == UInt8(ascii: "-") || (0x30...0x39).contains(first)
    else { return false }
    var parser = JSONByteParser<JSONSkip>(Array(text.utf8))
    guard (try? parser.number()) != nil else { return false }
    return parser.index == parser.bytes.count
  }

  /// The integer a number's spelling denotes exactly ("1.5e3" is 1500), or nil when it has a
  /// fraction or does not fit in 64 bits.
  /// - Parameter text: a number as Swift or JSON spells it.
  /// - Returns: the integer.
  package static func exactInteger(spelled text: String) -> Int64? {
    // The usual case, digits alone: Int64's own reading ("-0" is 0).
    if let integer = Int64(text) { return integer }
    let parts = text.lowercased().split(separator: "e", omittingEmptySubsequences: false)
    guard parts.count <= 2, let mantissa = parts.first else { return nil }
    let exponent = parts.count == 2 ? Int(parts[1]) : 0
    // A range, not abs(): the exponent -9223372036854775808 parses to Int.min, whose abs traps
    // (found by fuzzing).
    guard let exponent, (-400...400).contains(exponent) else { return nil }
    let negative = mantissa.hasPrefix("-")
    let unsigned = negative ? mantissa.dropFirst() : mantissa[...]
    let halves = unsigned.split(separator: ".", omittingEmptySubsequences: false)
    guard halves.count <= 2 else { return nil }
    var digits = String(halves[0]) + (halves.count == 2 ? String(halves[1]) : "")
    var shift = exponent - (halves.count == 2 ? halves[1].count : 0)
    while shift < 0, digits.last == "0" {
      digits.removeLast()
      shift += 1
    }
    guard shift >= 0, shift <= 19, !digits.isEmpty else { return nil }
    return Int64((negative ? "-" : "") + digits + String(repeating: "0", count: shift))
  }

  /// Whether a number is a whole one, of any size (`3.0`, `1e400`; not `0.5`).
  /// - Parameter text: a valid JSON number.
  /// - Returns: true when it is.
  package static func isWhole(_ text: String) -> Bool {
    let spelled = normalized(text)
    if spelled == "0" { return true }
    // A huge exponent: whole when it is positive (no sign or `+` after the `e`).
    if spelled.hasPrefix("~") {
      let exponent = text.lowercased().split(separator: "e").last ?? ""
      return !exponent.hasPrefix("-")
    }
    let parts = spelled.split(separator: "p")
    guard parts.count == 2, let place = Int(parts[1]) else { return false }
    let digits = parts[0].hasPrefix("-") ? parts[0].count - 1 : parts[0].count
    return place >= digits
  }

  /// The value a number's text denotes, in one spelling per value: what equality and hashing
  /// compare. `0` for every zero (`-0`, `0.0e5`); otherwise the sign, the significant digits
  /// without leading or trailing zeros, and the power of ten that places them (`1.50`, `15e-1`
  /// and `0.15e1` are all `15p1`: 0.15 × 10^1). An exponent of more than 15 digits
  /// is not placed: the text is its own spelling then (`~` and the text), so two such texts
  /// are the same number only when they are the same text.
  /// - Parameter text: a valid JSON number.
  /// - Returns: the spelling.
  package static func normalized(_ text: String) -> String {
    let utf8 = Array(text.utf8)
    var index = 0
    let negative = utf8.first == UInt8(ascii: "-")
    if negative { index += 1 }
    var digits: [UInt8] = []
    digits.reserveCapacity(utf8.count)
    var integerDigits = 0
    while index < utf8.count, (0x30...0x39).contains(utf8[index]) {
      digits.append(utf8[index])
      integerDigits += 1
      index += 1
    }
    if index < utf8.count, utf8[index] == UInt8(ascii: ".") {
      index += 1
      while index < utf8.count, (0x30...0x39).contains(utf8[index]) {
        digits.append(utf8[index])
        index += 1
      }
    }
    var exponent = 0
    if index < utf8.count, utf8[index] == UInt8(ascii: "e") || utf8[index] == UInt8(ascii: "E") {
      index += 1
      var exponentNegative = false
      if index < utf8.count, utf8[index] == UInt8(ascii: "+") || utf8[index] == UInt8(ascii: "-") {
        exponentNegative = utf8[index] == UInt8(ascii: "-")
        index += 1
      }
      while index < utf8.count, utf8[index] == UInt8(ascii: "0") { index += 1 }
      guard utf8.count - index <= 15 else { return "~" + text }
      while index < utf8.count {
        exponent = exponent * 10 + Int(utf8[index] - 0x30)
        index += 1
      }
      if exponentNegative { exponent = -exponent }
    }
    guard let first = digits.firstIndex(where: { $0 != UInt8(ascii: "0") }),
      let last = digits.lastIndex(where: { $0 != UInt8(ascii: "0") })
    else { return "0" }
    let place = exponent + integerDigits - first
    let significant = String(decoding: digits[first...last], as: UTF8.self)
    return (negative ? "-" : "") + significant + "p" + String(place)
  }
}
