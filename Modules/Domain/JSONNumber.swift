import CourierSystem

/// A JSON number, kept as the text that spells it, so that no digit is lost to a binary type:
/// an id beyond 64 bits (`18446744073709551617`), a decimal no `Double` holds (`0.1` stays
/// `0.1`, `1e400` stays `1e400`), a spelling (`1.50`, `-0`) are written back as they came.
///
/// Two numbers are equal when they are the same value, however spelled: `1`, `1.0` and `1e0`
/// are; so are `-0` and `0`. `int64Value` and `doubleValue` read the value.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral
{
  /// The text, or, for plain digits within 64 bits (what most numbers are), the integer they
  /// spell, which makes no text until one is asked for.
  private enum Storage: Sendable {
    case integer(Int64)
    case text(String)
  }

  private let storage: Storage

  /// The number's JSON text, as read or as made.
  public var description: String {
    switch storage {
    case .integer(let value): String(value)
    case .text(let text): text
    }
  }

  /// A number whose text is known to be valid JSON (the parser's).
  package init(verbatim text: String) { storage = .text(text) }

  /// An integer, in its decimal digits.
  /// - Parameter value: the integer.
  public init(_ value: Int64) { storage = .integer(value) }

  /// Any integer, in its decimal digits, however large.
  /// - Parameter value: the integer.
  package init(integer value: some BinaryInteger) {
    storage = Int64(exactly: value).map(Storage.integer) ?? .text(String(value))
  }

  /// A `Double`, as the digits that read back to it: a whole value within 64 bits as the
  /// integer (`3`), any other in Swift's shortest spelling (`0.1`, `1e-07`). Nil for NaN and
  /// the infinities, which JSON cannot hold.
  /// - Parameter value: the number.
  public init?(_ value: Double) {
    guard value.isFinite else { return nil }
    if let whole = Int64(exactly: value) {
      storage = .integer(whole)
    } else {
      storage = .text("\(value)")
    }
  }

  /// The number a JSON text spells, kept as spelled; nil when the text is not one JSON number
  /// (`+1`, `.5`, `1.`, `01`, `NaN`, blanks around it).
  /// - Parameter text: the text.
  public init?(_ text: String) {
    guard JSONNumberText.isValid(text) else { return nil }
    storage = .text(text)
  }

  /// An integer literal.
  /// - Parameter value: the literal.
  public init(integerLiteral value: Int64) { self.init(value) }

  /// A floating-point literal, as `init(_:)` spells a `Double` (a finite one: JSON has no
  /// infinity).
  /// - Parameter value: the literal.
  public init(floatLiteral value: Double) {
    guard let number = Self(value) else { preconditionFailure("JSON has no \(value)") }
    self = number
  }

  /// The value as a 64-bit integer, when it is whole and fits, however spelled (`1.5e3` is
  /// 1500, `2.0` is 2); nil otherwise.
  public var int64Value: Int64? {
    switch storage {
    case .integer(let value): value
    case .text(let text): JSONNumberText.exactInteger(spelled: text)
    }
  }

  /// The integer when the number is stored as one: plain digits that `String(value)` spells.
  package var plainInteger: Int64? {
    if case .integer(let value) = storage { return value }
    return nil
  }

  /// Whether the value is a whole number (`3`, `3.0`, `1e400`; not `0.5`), of any size.
  package var isWhole: Bool {
    switch storage {
    case .integer: true
    case .text(let text): JSONNumberText.isWhole(text)
    }
  }

  /// The value as the nearest `Double`: beyond 2^53 an integer rounds, and beyond the
  /// `Double` range the value is ±infinity.
  public var doubleValue: Double {
    switch storage {
    case .integer(let value): Double(value)
    case .text(let text): Double(text) ?? (text.hasPrefix("-") ? -.infinity : .infinity)
    }
  }

  /// Whether two numbers are the same value.
  /// - Parameters:
  ///   - lhs: a number.
  ///   - rhs: another.
  /// - Returns: true when they are.
  public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
    switch (lhs.storage, rhs.storage) {
    case (.integer(let a), .integer(let b)): return a == b
    case (.text(let a), .text(let b)) where a == b: return true
    default:
      return JSONNumberText.normalized(lhs.description)
        == JSONNumberText.normalized(rhs.description)
    }
  }

  /// Hashes the value, so that equal numbers however spelled hash alike: a whole value within
  /// 64 bits as that integer, any other by its one spelling per value.
  /// - Parameter hasher: the hasher.
  public func hash(into hasher: inout Hasher) {
    if let value = int64Value {
      hasher.combine(0)
      hasher.combine(value)
    } else {
      hasher.combine(1)
      hasher.combine(JSONNumberText.normalized(description))
    }
  }
}
