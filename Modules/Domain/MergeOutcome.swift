#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The result of a three-way merge of one record (`ThreeWayMerge`).
package enum MergeOutcome: Sendable, Equatable {
  /// The record's fields after the merge: send them on top of the server's version.
  case merged(JSONValue)
  /// Both sides end with the record gone: a local delete of a record the server did not change
  /// since the base, a server's removal of a record the user did not change, or both deleted.
  case deleted
  /// No field-by-field answer: a delete on one side against a change on the other. The write
  /// is kept conflicted for the user.
  case conflict(Reason)

  /// Why a record could not be merged field by field.
  package enum Reason: String, Sendable, CaseIterable {
    /// Deleted here, changed at the server since the base.
    case deletedHereChangedThere = "deleted_here_changed_there"
    /// Changed here since the base, removed at the server.
    case changedHereDeletedThere = "changed_here_deleted_there"
  }
}
