#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A record as the server last sent it. The server owns `version` and `updatedAt`.
package struct ServerRecord: Sendable, Equatable, Codable {
  /// The record's id.
  package var id: String
  /// The record's fields other than the id, the version and the update time.
  package var payload: JSONValue
  /// The server's version of the record.
  package var version: Int
  /// When the server last changed it, if it said.
  package var updatedAt: Date?

  /// Creates a server record.
  /// - Parameters:
  ///   - id: the id.
  ///   - payload: the other fields.
  ///   - version: the server's version.
  ///   - updatedAt: the server's update time.
  package init(id: String, payload: JSONValue, version: Int, updatedAt: Date? = nil) {
    self.id = id
    self.payload = payload
    self.version = version
    self.updatedAt = updatedAt
  }
}
