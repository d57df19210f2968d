/// What `JSONByteParser` builds: the JSON value type of a module above this one. The domain's
/// `JSONValue` conforms with its cases; `JSONSkip` checks a text and builds nothing.
package protocol JSONTree {
  /// `null`.
  static var null: Self { get }
  /// `true` or `false`.
  /// - Parameter value: which.
  /// - Returns: the value.
  static func bool(_ value: Bool) -> Self
  /// A number, as the text spells it (checked against RFC 8259's grammar, not converted): no
  /// digit is lost to a binary type.
  /// - Parameter text: the number's text.
  /// - Returns: the value.
  static func number(literal text: String) -> Self
  /// A number spelled as plain digits that `Int64` holds (at most 18 of them, not `-0`): the
  /// text is exactly `String(value)`, so no text need be made.
  /// - Parameter value: the number.
  /// - Returns: the value.
  static func number(integer value: Int64) -> Self
  /// A string, unescaped.
  /// - Parameter value: the text.
  /// - Returns: the value.
  static func string(_ value: String) -> Self
  /// An array, in order.
  /// - Parameter elements: the elements.
  /// - Returns: the value.
  static func array(_ elements: [Self]) -> Self
  /// An object; of repeated names, the first member.
  /// - Parameter members: the members.
  /// - Returns: the value.
  static func object(_ members: [String: Self]) -> Self
}
