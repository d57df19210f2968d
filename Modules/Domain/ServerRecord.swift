#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A record as the server last sent it. The server owns `version` and `updatedAt`.
public struct ServerRecord: Sendable, Equatable, Codable {
  /// The record's id.
  public var id: String
  /// The record's fields other than the id, the version and the update time.
  public var payload: JSONValue
  /// The server's version of the record.
  public var version: Int
  /// When the server last changed it, if it said.
  public var updatedAt: Date?

  /// Creates a server record.
  /// - Parameters:
  ///   - id: the id.
  ///   - payload: the other fields.
  ///   - version: the server's version.
  ///   - updatedAt: the server's update time.
  public init(id: String, payload: JSONValue, version: Int, updatedAt: Date? = nil) {
    self.id = id
    self.payload = payload
    self.version = version
    self.updatedAt = updatedAt
  }
}
