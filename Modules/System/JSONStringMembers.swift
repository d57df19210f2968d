/// Reads chosen string members of JSON objects without building the objects: for listings that
/// print a few members of many records (a projection read, issue 14). Each text is checked as
/// `JSONValue(parsing:)` checks it and the same texts are refused; a member is its string, or nil
/// when the object lacks it or holds something else there (the first of repeated names wins,
/// as in `JSONValue(parsing:)`); a text that is valid JSON but not an object has none of them.
package struct JSONStringMembers: Sendable {
  /// The members, in the order wanted.
  package let names: [String]
  private let encoded: [[UInt8]]

  /// A reader of these members.
  /// - Parameter names: the members, in order (at most 64).
  package init(_ names: [String]) {
    precondition(names.count <= 64, "JSONStringMembers reads at most 64 members")
    self.names = names
    encoded = names.map { Array($0.utf8) }
  }

  /// The members of one JSON text.
  /// - Parameter bytes: the text.
  /// - Returns: one entry per name.
  /// - Throws: `JSONSyntaxError` naming the byte offset, for any text
  ///   `JSONValue(parsing:)` refuses.
  package func read(_ bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) -> [String?] {
    var parser = JSONByteParser<JSONSkip>(Array(bytes))
    return try parser.stringMembers(encoded)
  }
}
