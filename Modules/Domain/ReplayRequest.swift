import Foundation

/// The request that sends one outbox operation (decision 0412): `PUT <path>/<id>` with the
/// canonical JSON body for a create or an update, `DELETE <path>/<id>` for a delete,
/// `If-Match` with the base version's tag (`"v<base>"`, or the collection's own prefix) when the
/// write is based on a version, and an `Idempotency-Key` that is the operation id plus the base
/// version. Pure: the same operation gives the same bytes in
/// every process.
public struct ReplayRequest: Sendable, Equatable {
  /// The method: `PUT` or `DELETE`.
  public var method: HTTPMethod
  /// The record's path, its id percent-encoded.
  public var path: String
  /// `Idempotency-Key`, `If-Match` when based on a version, `Content-Type` with a body.
  public var headers: HTTPHeaders
  /// The payload as JSON (nil for a delete); `body()` gives its bytes.
  public var json: JSONValue?

  /// Describes the request that sends an operation.
  /// - Parameters:
  ///   - operation: the operation.
  ///   - collection: the collection's description (its path and version tag).
  public init(_ operation: OutboxOperation, collection: CollectionDescription) {
    let escaped =
      operation.key.id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
      ?? operation.key.id
    path = "\(collection.path)/\(escaped)"
    headers = ["Idempotency-Key": Self.idempotencyKey(for: operation)]
    if let base = operation.baseVersion {
      headers["If-Match"] = collection.answers.tag(forVersion: base)
    }
    switch operation.kind {
    case .create, .update:
      method = .put
      json = operation.payload ?? .object([:])
      headers["Content-Type"] = "application/json; charset=utf-8"
    case .delete:
      method = .delete
      json = nil
    }
  }

  /// The body's canonical bytes: sorted keys, slashes unescaped, so the same payload gives the
  /// same bytes in every process (a replay after a crash must match what the server stored
  /// under the Idempotency-Key; dictionary order changes between runs).
  /// - Returns: the bytes, nil for a delete.
  /// - Throws: the encoder's error when the payload cannot be encoded (a non-finite number).
  public func body() throws -> Data? {
    guard let json else { return nil }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(json)
  }

  /// The `Idempotency-Key` of one send: the operation id, plus the base version when there is
  /// one, so a re-send after a conflict (same operation, new base) is a new request for the
  /// server while a replay after a crash (same operation, same base) is recognised.
  /// - Parameter operation: the operation.
  /// - Returns: the key.
  public static func idempotencyKey(for operation: OutboxOperation) -> String {
    let id = operation.id.uuidString.lowercased()
    guard let base = operation.baseVersion else { return id }
    return "\(id).v\(base)"
  }
}
