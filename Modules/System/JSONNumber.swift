/// Numbers as JSON spells them.
package enum JSONNumber {
  /// The integer a number's spelling denotes exactly ("1.5e3" is 1500), or nil when it has a
  /// fraction or does not fit in 64 bits.
  /// - Parameter text: a number as Swift or JSON spells it.
  /// - Returns: the integer.
  @inlinable
  package static func exactInteger(spelled text: String) -> Int64? {
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
}
