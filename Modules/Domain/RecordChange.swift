#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An optimistic local write: what the user did to one record.
package enum RecordChange: Sendable, Equatable, Codable {
  /// Create or replace the record's fields.
  case put(RecordKey, payload: JSONValue)
  /// Delete the record.
  case delete(RecordKey)

  /// The record changed.
  package var key: RecordKey {
    switch self {
    case .put(let key, _), .delete(let key): return key
    }
  }
}
