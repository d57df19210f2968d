#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a collection's server answers mean, as its declaration says (decision 1203): how a base
/// version is written in `If-Match`, which statuses prove a write, which error codes are a
/// version conflict and which 404 to a delete means "already gone". The defaults are the backend
/// contract's (`"v<n>"`, 200/201, 204, `version_conflict`, `not_found`).
package struct ServerAnswers: Sendable, Equatable, Codable {
  /// What comes before the version number in an entity tag: `"v3"` for `v`, `"r3"` for `r`.
  package var versionTagPrefix: String
  /// The statuses that answer a create or an update whose body is the record (`200`, `201`).
  package var writeStatuses: Set<Int>
  /// The statuses that answer a delete without a body (`204`; a `200` with an empty body is
  /// always accepted too).
  package var deleteStatuses: Set<Int>
  /// The error codes of a `409` that mean the base version is stale (the answer's `current`
  /// is the server's record): `version_conflict`.
  package var conflictCodes: Set<String>
  /// The error codes of a `404` to a delete that mean the record is already gone, so the
  /// delete's effect holds: `not_found`.
  package var goneCodes: Set<String>

  /// The backend contract's answers.
  package static let contract = ServerAnswers()

  /// Creates answer rules; every default is the backend contract's.
  /// - Parameters:
  ///   - versionTagPrefix: the entity tag's prefix before the version number.
  ///   - writeStatuses: the statuses of a proven create or update.
  ///   - deleteStatuses: the statuses of a proven delete.
  ///   - conflictCodes: the `409` codes that mean a stale base version.
  ///   - goneCodes: the `404` codes that mean a deleted record is already gone.
  package init(
    versionTagPrefix: String = "v", writeStatuses: Set<Int> = [200, 201],
    deleteStatuses: Set<Int> = [204], conflictCodes: Set<String> = ["version_conflict"],
    goneCodes: Set<String> = ["not_found"]
  ) {
    self.versionTagPrefix = versionTagPrefix
    self.writeStatuses = writeStatuses
    self.deleteStatuses = deleteStatuses
    self.conflictCodes = conflictCodes
    self.goneCodes = goneCodes
  }

  /// The entity tag of a version: `"v3"` (quotes included).
  /// - Parameter version: the version.
  /// - Returns: the tag.
  package func tag(forVersion version: Int) -> String { "\"\(versionTagPrefix)\(version)\"" }

  /// Whether a refusal is a version conflict: a `409` (or any refusal carrying `current`) with one
  /// of `conflictCodes`, or with a `current` record and no code at all.
  /// - Parameter error: the classified refusal.
  /// - Returns: true for a conflict the policy settles.
  package func isConflict(_ error: CourierError) -> Bool {
    guard error.kind == .conflict else { return false }
    if let code = error.code { return conflictCodes.contains(code) || error.current != nil }
    return error.current != nil
  }

  /// Whether a refusal of a delete means the record is already gone at the server: a `404` with
  /// one of `goneCodes` (the server's own error body, not a portal's 404 page).
  /// - Parameter error: the classified refusal.
  /// - Returns: true when the delete's effect holds.
  package func isAlreadyGone(_ error: CourierError) -> Bool {
    error.status == 404 && error.code.map { goneCodes.contains($0) } == true
  }

  /// Whether the server's own refusal of a write based on a version says that the record is
  /// no longer there (decision 2401): a `404` with one of `goneCodes`, a `410` with the
  /// server's error body, or a version conflict (`isConflict`'s codes) that shows no current
  /// record (`current` absent or `null`).
  /// - Parameter error: the classified refusal.
  /// - Returns: true when the record was deleted on the server.
  package func isRecordGone(_ error: CourierError) -> Bool {
    guard error.kind == .business || error.kind == .conflict else { return false }
    if isAlreadyGone(error) || error.status == 410 { return true }
    guard error.kind == .conflict, error.current == nil || error.current == .null else {
      return false
    }
    return error.code.map { conflictCodes.contains($0) } == true
  }
}
