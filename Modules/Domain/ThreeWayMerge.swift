#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Merges a local write into the server's newer record field by field, against the base copy
/// the write started from (decision 1201).
///
/// Per top-level field: both sides equal → that value; only the user changed it → the user's;
/// only the server changed it (a field a newer server added included) → the server's; both
/// changed it differently → the resolver. A field removed on the one side that changed it is
/// removed. Nested objects are one field each (no recursive merge). When the base is unknown,
/// every field is compared as if the base lacked it: a field only one side has is kept, and a
/// field both have with different values goes to the resolver.
///
/// Pure: every rule is a table test (`ThreeWayMergeTests`).
package enum ThreeWayMerge {
  /// Merges one record.
  /// - Parameters:
  ///   - base: the fields the local write started from; nil when unknown.
  ///   - mine: the local write's fields; nil for a local delete.
  ///   - theirs: the server's current fields; nil when the server removed the record.
  ///   - baseKnown: whether `base` is the base copy (false: it is unknown, compare without it).
  ///   - resolve: settles the fields both sides changed.
  /// - Returns: the merged fields, an agreed deletion, or a conflict no field merge settles.
  package static func merge(
    base: JSONValue?, mine: JSONValue?, theirs: JSONValue?, baseKnown: Bool = true,
    resolve: FieldResolver
  ) -> MergeOutcome {
    switch (mine, theirs) {
    case (nil, nil):
      return .deleted
    case (nil, let theirs?):
      // A delete wins only over a record the server left as the user last saw it.
      return baseKnown && base == theirs ? .deleted : .conflict(.deletedHereChangedThere)
    case (let mine?, nil):
      return baseKnown && base == mine ? .deleted : .conflict(.changedHereDeletedThere)
    case (let mine?, let theirs?):
      let base = baseKnown ? base : nil
      guard case .object(let myFields) = mine, case .object(let theirFields) = theirs else {
        // Not objects: the whole value is one field.
        return .merged(field("", base: base, mine: mine, theirs: theirs, resolve) ?? .null)
      }
      let baseFields: [String: JSONValue] =
        if case .object(let fields)? = base { fields } else { [:] }
      var merged: [String: JSONValue] = [:]
      let names = Set(myFields.keys).union(theirFields.keys).union(baseFields.keys)
      for name in names.sorted() {
        merged[name] = field(
          name, base: baseFields[name], mine: myFields[name], theirs: theirFields[name], resolve)
      }
      return .merged(.object(merged))
    }
  }

  private static func field(
    _ name: String, base: JSONValue?, mine: JSONValue?, theirs: JSONValue?,
    _ resolve: FieldResolver
  ) -> JSONValue? {
    if mine == theirs { return mine }
    if mine == base { return theirs }
    if theirs == base { return mine }
    return resolve(name, base, mine, theirs)
  }

  /// The default resolver: the newer write wins each field both sides changed, as
  /// `ConflictPolicy.lastWriteWins` decides for whole records (the local edit time against the
  /// server's `updated_at`; ties and the server without a time as in decision 0411).
  /// - Parameters:
  ///   - localEditAt: when the user made the local write.
  ///   - serverUpdatedAt: when the server last changed the record, nil when it did not say.
  /// - Returns: the resolver.
  package static func lastWriteWins(localEditAt: Date, serverUpdatedAt: Date?) -> FieldResolver {
    let localWins = serverUpdatedAt.map { localEditAt > $0 } ?? true
    return { _, _, mine, theirs in localWins ? mine : theirs }
  }

  /// A resolver that always keeps the server's value of a field both sides changed.
  package static let serverWins: FieldResolver = { _, _, _, theirs in theirs }

  /// A resolver that always keeps the local value of a field both sides changed.
  package static let localWins: FieldResolver = { _, _, mine, _ in mine }
}
