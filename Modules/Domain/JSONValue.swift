#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Any JSON value, kept as is: a server's record carried by a conflict, say.
///
/// A number whose value is whole and fits in 64 bits is read as `.integer`, exactly, however it
/// is spelled (`9007199254740993` stays that id; `1.5e3` is `.integer(1500)`); any other number
/// is a `.number`. The two compare and hash by value (`.integer(3) == .number(3)`), and a whole
/// `.number` within 64 bits is written as the integer it is.
public enum JSONValue: Sendable, Hashable, Codable {
  /// JSON's `null`: a member present with no value.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A whole number that fits in 64 bits, exact.
  case integer(Int64)
  /// Any other number (a fraction, an exponent, or beyond 64 bits), as a `Double`.
  case number(Double)
  /// A JSON string, unescaped.
  case string(String)
  /// A JSON array, in order.
  case array([JSONValue])
  /// A JSON object; member order is not kept.
  case object([String: JSONValue])

  /// Decodes any JSON value.
  /// - Parameter decoder: the decoder.
  /// - Throws: `DecodingError` when the input is not JSON.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      // Like the parser: any spelling of a whole value within 64 bits, exactly.
      self = .integer(value)
    } else if let value = try? container.decode(Double.self) {
      self = .number(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  /// Encodes the value as JSON.
  /// - Parameter encoder: the encoder.
  /// - Throws: what the encoder throws.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .integer(let value): try container.encode(value)
    case .number(let value):
      if let whole = Int64(exactly: value) {
        try container.encode(whole)
      } else {
        try container.encode(value)
      }
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }

  /// Whether two values are the same JSON: numbers compare by value, so `.integer(3)` equals
  /// `.number(3)` (and `.number(3.5)` equals no integer).
  /// - Parameters:
  ///   - lhs: a value.
  ///   - rhs: another.
  /// - Returns: true when they are the same JSON.
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.integer(let a), .integer(let b)): a == b
    case (.number(let a), .number(let b)): a == b
    case (.integer(let a), .number(let b)), (.number(let b), .integer(let a)):
      Int64(exactly: b) == a
    case (.string(let a), .string(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)): a == b
    default: false
    }
  }

  /// Hashes the value so that equal values (`.integer(3)`, `.number(3)`) hash alike.
  /// - Parameter hasher: the hasher.
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0)
    case .bool(let value):
      hasher.combine(1)
      hasher.combine(value)
    case .integer(let value):
      hasher.combine(2)
      hasher.combine(value)
    case .number(let value):
      if let whole = Int64(exactly: value) {
        hasher.combine(2)
        hasher.combine(whole)
      } else {
        hasher.combine(3)
        hasher.combine(value)
      }
    case .string(let value):
      hasher.combine(4)
      hasher.combine(value)
    case .array(let value):
      hasher.combine(5)
      hasher.combine(value)
    case .object(let value):
      hasher.combine(6)
      hasher.combine(value)
    }
  }

  /// The member of an object, or nil.
  /// - Parameter key: the member's name.
  public subscript(key: String) -> JSONValue? {
    if case .object(let members) = self { return members[key] }
    return nil
  }

  /// The string, when this is one.
  package var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The number as an integer, when this is a whole number that fits in `Int`.
  package var intValue: Int? {
    switch self {
    case .integer(let value): Int(exactly: value)
    case .number(let value) where value.rounded() == value && abs(value) < 1e15: Int(value)
    default: nil
    }
  }

  /// The number as a `Double` (an integer beyond 2^53 rounds), when this is a number.
  package var doubleValue: Double? {
    switch self {
    case .integer(let value): Double(value)
    case .number(let value): value
    default: nil
    }
  }

  /// Compact JSON text, keys sorted by their UTF-8 bytes, written directly (no `JSONEncoder`:
  /// the local store writes every payload with it, and Foundation's encoder cost several times
  /// as much, Docs/benchmarks/sync.md). `JSONValue(parsing:)` reads it back to an equal value; a
  /// number that is not finite (which JSON cannot hold) is written `null`. Not the bytes of a
  /// request body: those stay `JSONEncoder`'s (`ReplayRequest.body()`), so a replay after an
  /// upgrade sends what the server stored under its `Idempotency-Key`.
  package var jsonText: String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(64)
    write(into: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  private func write(into bytes: inout [UInt8]) {
    switch self {
    case .null: bytes += Array("null".utf8)
    case .bool(let value): bytes += Array((value ? "true" : "false").utf8)
    case .integer(let value): bytes += Array(String(value).utf8)
    case .number(let value):
      if let whole = Int64(exactly: value) {
        bytes += Array(String(whole).utf8)
      } else if value.isFinite {
        bytes += Array("\(value)".utf8)
      } else {
        bytes += Array("null".utf8)
      }
    case .string(let value): Self.write(string: value, into: &bytes)
    case .array(let items):
      bytes.append(UInt8(ascii: "["))
      for (index, item) in items.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        item.write(into: &bytes)
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let members):
      bytes.append(UInt8(ascii: "{"))
      let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
      for (index, key) in keys.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        Self.write(string: key, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
        members[key]?.write(into: &bytes)
      }
      bytes.append(UInt8(ascii: "}"))
    }
  }

  private static func write(string: String, into bytes: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    bytes.append(UInt8(ascii: "\""))
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
      case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
      case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
      case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
      case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
      case 0..<0x20:
        bytes += Array("\\u00".utf8)
        bytes += [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
