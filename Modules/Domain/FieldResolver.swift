#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Settles one field that both the local write and the server changed since the base copy, in
/// a three-way merge: called with the field's name and its three values (nil: absent on that
/// side), it returns the value to keep, or nil to leave the field out.
public typealias FieldResolver =
  @Sendable (_ field: String, _ base: JSONValue?, _ mine: JSONValue?, _ theirs: JSONValue?) ->
  JSONValue?
