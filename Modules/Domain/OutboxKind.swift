#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What an outbox operation asks the server to do to a record.
package enum OutboxKind: String, Sendable, Codable, CaseIterable {
  /// Create the record (the client chose its id).
  case create
  /// Replace the record's fields, based on a version.
  case update
  /// Delete the record.
  case delete
}
