/// A JSON value not kept: what `JSONStringMembers` parses the members it does not want into, so
/// that they are checked as `JSONValue(parsing:)` checks them and never built.
package struct JSONSkip: JSONTree {
  /// The one value: nothing.
  package static var null: JSONSkip { JSONSkip() }
  package static func bool(_ value: Bool) -> JSONSkip { null }
  package static func number(literal text: String) -> JSONSkip { null }
  package static func number(integer value: Int64) -> JSONSkip { null }
  package static func string(_ value: String) -> JSONSkip { null }
  package static func array(_ elements: [JSONSkip]) -> JSONSkip { null }
  package static func object(_ members: [String: JSONSkip]) -> JSONSkip { null }
}
