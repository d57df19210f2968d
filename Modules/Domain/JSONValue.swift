import Foundation

/// Any JSON value, kept as is: a server's record carried by a conflict, say.
public enum JSONValue: Sendable, Hashable, Codable {
  /// JSON's `null`: a member present with no value.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A JSON number, as a `Double` (integers beyond 2^53 lose precision).
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
    case .number(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }

  /// The member of an object, or nil.
  /// - Parameter key: the member's name.
  public subscript(key: String) -> JSONValue? {
    if case .object(let members) = self { return members[key] }
    return nil
  }

  /// The string, when this is one.
  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The number as an integer, when this is a whole number.
  public var intValue: Int? {
    if case .number(let value) = self, value.rounded() == value, abs(value) < 1e15 {
      return Int(value)
    }
    return nil
  }

  /// Compact JSON text with sorted keys.
  public var jsonText: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(self) else { return "null" }
    return String(decoding: data, as: UTF8.self)
  }
}
