import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The request that sends one outbox operation (decision 0412): `PUT <path>/<id>` with the
/// canonical JSON body for a create or an update, `DELETE <path>/<id>` for a delete,
/// `If-Match` with the base version's tag (`"v<base>"`, or the collection's own prefix) when the
/// write is based on a version, and an `Idempotency-Key` that is the operation id plus the base
/// version. Pure: the same operation gives the same bytes in
/// every process.
package struct ReplayRequest: Sendable, Equatable {
  /// The method: `PUT` or `DELETE`.
  package var method: HTTPRequest.Method
  /// The record's path, its id percent-encoded.
  package var path: String
  /// `Idempotency-Key`, `If-Match` when based on a version, `Content-Type` with a body.
  package var headerFields: HTTPFields
  /// The payload as JSON (nil for a delete); `body()` gives its bytes.
  package var json: JSONValue?

  /// Describes the request that sends an operation.
  /// - Parameters:
  ///   - operation: the operation.
  ///   - collection: the collection's description (its path and version tag).
  package init(_ operation: OutboxOperation, collection: CollectionDescription) {
    let escaped = Self.pathSegment(operation.key.id)
    path = "\(collection.path)/\(escaped)"
    headerFields = [.idempotencyKey: Self.idempotencyKey(for: operation)]
    if let base = operation.baseVersion {
      headerFields[.ifMatch] = collection.answers.tag(forVersion: base)
    }
    switch operation.kind {
    case .create, .update:
      method = .put
      json = operation.payload ?? .object([:])
      headerFields[.contentType] = "application/json; charset=utf-8"
    case .delete:
      method = .delete
      json = nil
    }
  }

  /// The body's canonical bytes: sorted keys, slashes unescaped, every number as its text, so
  /// the same payload gives the same bytes in every process (a replay after a crash must match
  /// what the server stored under the Idempotency-Key; dictionary order changes between runs).
  /// - Returns: the bytes, nil for a delete.
  /// - Throws: the encoder's error when the payload cannot be encoded.
  package func body() throws -> Data? {
    guard let json else { return nil }
    // The bytes are `JSONEncoder`'s (sorted keys, slashes as they are) whenever the encoder
    // writes the payload exactly: a replay after an upgrade must match what the server stored
    // under the Idempotency-Key. A payload made only of what both writers spell the same (keys
    // of lowercase letters and `_`, strings without control characters, integers as Int64
    // spells them, booleans, null) is written directly, the same bytes (`ReplayRequestTests`
    // checks them against the encoder): Foundation's encoder was 4 % of a replay's CPU
    // (Docs/benchmarks/sync.md). A payload the encoder would change (a number it would round
    // or respell, nesting past what it walks safely) is `jsonText`, every digit as it came
    // (decision 2428).
    if let bytes = Self.simpleBytes(json) { return Data(bytes) }
    guard Self.encoderWritesExactly(json) else { return Data(json.jsonText.utf8) }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(json)
  }

  /// The nesting up to which a body may be written by recursion (`simpleBytes`, the encoder).
  static let recursionDepth = 64

  /// Whether `JSONEncoder` writes a value exactly: nested at most `recursionDepth` levels, and
  /// every number one it spells as its text (an Int64's digits, or a Double's shortest
  /// spelling that is not whole).
  static func encoderWritesExactly(_ value: JSONValue) -> Bool {
    var pending: [(JSONValue, Int)] = [(value, 0)]
    while let (value, level) = pending.popLast() {
      switch value {
      case .number(let number):
        if number.plainInteger != nil { continue }
        let text = number.description
        if let integer = Int64(text), String(integer) == text { continue }
        guard let double = Double(text), Int64(exactly: double) == nil,
          JSONNumber(double)?.description == text
        else { return false }
      case .array(let items):
        guard level < recursionDepth else { return false }
        for item in items { pending.append((item, level + 1)) }
      case .object(let members):
        guard level < recursionDepth else { return false }
        for item in members.values { pending.append((item, level + 1)) }
      case .null, .bool, .string: continue
      }
    }
    return true
  }

  /// The canonical bytes of a value both writers spell alike, or nil for any other.
  static func simpleBytes(_ value: JSONValue) -> [UInt8]? {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(96)
    return write(value, into: &bytes, level: 0) ? bytes : nil
  }

  private static func write(_ value: JSONValue, into bytes: inout [UInt8], level: Int) -> Bool {
    switch value {
    case .null: bytes += Array("null".utf8)
    case .bool(let flag): bytes += Array((flag ? "true" : "false").utf8)
    case .number(let number):
      // Digits as Int64 spells them; any other spelling is the encoder's own, or exact text.
      let text = number.description
      guard number.plainInteger != nil || Int64(text).map(String.init) == text else {
        return false
      }
      bytes += Array(text.utf8)
    case .string(let text): return write(text, into: &bytes)
    case .array(let items):
      guard level < recursionDepth else { return false }
      bytes.append(UInt8(ascii: "["))
      for (index, item) in items.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        guard write(item, into: &bytes, level: level + 1) else { return false }
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let members):
      // The encoder sorts keys its own way; for lowercase letters and `_` that is byte order.
      let simple = members.keys.allSatisfy { key in
        !key.isEmpty
          && key.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x61...0x7A).contains($0) }
      }
      guard simple, level < recursionDepth else { return false }
      bytes.append(UInt8(ascii: "{"))
      for (index, key) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        .enumerated()
      {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        guard write(key, into: &bytes), let member = members[key] else { return false }
        bytes.append(UInt8(ascii: ":"))
        guard write(member, into: &bytes, level: level + 1) else { return false }
      }
      bytes.append(UInt8(ascii: "}"))
    }
    return true
  }

  private static func write(_ text: String, into bytes: inout [UInt8]) -> Bool {
    bytes.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case 0..<0x20, 0x7F: return false  // escapes are the encoder's own
      case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
    return true
  }

  /// Whether a byte may stand in a path segment as it is (RFC 3986 unreserved).
  /// An id as one path segment: the bytes Foundation's `urlPathAllowed` keeps (RFC 3986's
  /// unreserved characters, `!$&'()*+,=@`) kept, every other byte of its UTF-8 as `%XX`,
  /// including `/` (which that set kept), so that an id can never name another path; `.` and
  /// `..` are escaped whole, so that they cannot be read as a step up.
  /// - Parameter id: the record's id.
  /// - Returns: the segment.
  package static func pathSegment(_ id: String) -> String {
    // Most ids (a UUID) need no escaping.
    if id.utf8.allSatisfy(isUnreserved), id != ".", id != ".." { return id }
    let hex = Array("0123456789ABCDEF".utf8)
    let dotsOnly = id == "." || id == ".."
    var bytes: [UInt8] = []
    bytes.reserveCapacity(id.utf8.count * 3)
    for byte in id.utf8 {
      if !dotsOnly, isUnreserved(byte) || isPathDelimiter(byte) {
        bytes.append(byte)
      } else {
        bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The delimiters `urlPathAllowed` kept as they are (not `;`, `:` or `/`).
  private static func isPathDelimiter(_ byte: UInt8) -> Bool {
    "!$&'()*+,=@".utf8.contains(byte)
  }

  private static func isUnreserved(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
      UInt8(ascii: "_"), UInt8(ascii: "~"):
      return true
    default:
      return false
    }
  }

  /// The `Idempotency-Key` of one send: the operation id, plus the base version when there is
  /// one, so a re-send after a conflict (same operation, new base) is a new request for the
  /// server while a replay after a crash (same operation, same base) is recognised.
  /// - Parameter operation: the operation.
  /// - Returns: the key.
  package static func idempotencyKey(for operation: OutboxOperation) -> String {
    let id = operation.id.uuidString.lowercased()
    guard let base = operation.baseVersion else { return id }
    return "\(id).v\(base)"
  }
}
