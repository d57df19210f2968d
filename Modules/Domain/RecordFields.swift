#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Chosen members of a stored record's local payload, read without decoding the rest of it:
/// what a listing prints (a projection read, issue 14). A member is its string value, or nil
/// when the payload lacks it or holds something else there.
package struct RecordFields: Sendable, Equatable {
  /// The record's id.
  package var id: String
  /// Where the record stands relative to the server.
  package var state: LocalState
  /// Whether the record is deleted here (it has no local payload).
  package var isDeleted: Bool
  /// The server's version it was last seen at; nil when the server has never confirmed it.
  package var version: Int?
  /// When the server last changed it, as far as the store knows.
  package var updatedAt: Date?
  /// The members asked for, in the order asked: the string, or nil.
  package var values: [String?]

  /// Creates fields.
  /// - Parameters:
  ///   - id: the record's id.
  ///   - state: its local state.
  ///   - isDeleted: whether it has no local payload.
  ///   - version: the server's version.
  ///   - updatedAt: the server's update time.
  ///   - values: the members asked for, in order.
  package init(
    id: String, state: LocalState, isDeleted: Bool, version: Int?, updatedAt: Date?,
    values: [String?]
  ) {
    self.id = id
    self.state = state
    self.isDeleted = isDeleted
    self.version = version
    self.updatedAt = updatedAt
    self.values = values
  }

  /// The same fields taken from a record decoded whole: what a store without a projection read
  /// answers, and what one with it must agree with.
  /// - Parameters:
  ///   - record: the record.
  ///   - names: the payload members, in order.
  package init(_ record: LocalRecord, names: [String]) {
    self.init(
      id: record.key.id, state: record.state, isDeleted: record.isDeleted,
      version: record.version, updatedAt: record.updatedAt,
      values: names.map { record.payload?[$0]?.stringValue })
  }
}
