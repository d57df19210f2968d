import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Any JSON value, kept as is: a record's fields, a server's record carried by a conflict.
///
/// A number keeps the text that spells it (``JSONNumber``), so an integer of any size and any
/// decimal go back to the server with every digit; numbers compare by value (`1.0 == 1`).
/// Objects do not keep their members' order. Parsing refuses text nested deeper than
/// ``maximumDepth``; comparing, hashing and writing a value never recurse on the machine stack
/// (decision 2428).
public enum JSONValue: Sendable, Hashable, Codable {
  /// JSON's `null`: a member present with no value.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number, as its text.
  case number(JSONNumber)
  /// A JSON string, unescaped.
  case string(String)
  /// A JSON array, in order.
  case array([JSONValue])
  /// A JSON object; member order is not kept.
  case object([String: JSONValue])

  /// The deepest nesting of arrays and objects `init(parsing:)` reads: 10,000 levels on Linux
  /// (glibc), 1,000 elsewhere, where threads may have less stack to free a value with (the
  /// Swift runtime frees nested values recursively, about 280 bytes a level). Deeper text is
  /// refused, naming where, never cut short.
  public static let maximumDepth = JSONLimits.maxDepth

  /// The deepest nesting `Codable` reads or writes: Foundation's own limit. The coders recurse
  /// on the machine stack, a level at a time; Courier's own store and requests use
  /// `init(parsing:)` and `jsonText`, which do not.
  static let codableDepth = 512

  /// When the coder's `userInfo` holds `true` under this key, a value is coded as one string,
  /// its `jsonText`, and read back with `init(parsing:)`: exact for every number and nesting
  /// `init(parsing:)` reads, whatever the coder's own number types and depth (the file store's
  /// format 2).
  package static let codedAsText: CodingUserInfoKey = {
    guard let key = CodingUserInfoKey(rawValue: "courier.jsonValue.codedAsText") else {
      preconditionFailure("CodingUserInfoKey refused a plain name")
    }
    return key
  }()

  /// A whole number, as its decimal digits.
  /// - Parameter value: the number.
  /// - Returns: the value.
  package static func integer(_ value: some BinaryInteger) -> JSONValue {
    .number(JSONNumber(integer: value))
  }

  /// A `Double` as `JSONNumber` spells it; `null` for NaN and the infinities, which JSON cannot
  /// hold.
  /// - Parameter value: the number.
  /// - Returns: the value.
  package static func double(_ value: Double) -> JSONValue {
    JSONNumber(value).map(JSONValue.number) ?? .null
  }

  /// Decodes any JSON value. A number is exact when the decoder gives it as an `Int64` or as a
  /// `Double` that spells it; the others round to the nearest `Double`.
  /// - Parameter decoder: the decoder.
  /// - Throws: `DecodingError` when the input is not JSON, or nested deeper than 512 levels.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if decoder.userInfo[Self.codedAsText] as? Bool == true {
      let text = try container.decode(String.self)
      do {
        self = try JSONValue(parsing: text)
      } catch {
        throw DecodingError.dataCorruptedError(
          in: container, debugDescription: "Not JSON text: \(error)")
      }
      return
    }
    guard decoder.codingPath.count < Self.codableDepth else {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: "Nested deeper than \(Self.codableDepth) levels.")
    }
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      self = .number(JSONNumber(value))
    } else if let value = try? container.decode(Double.self) {
      self = .double(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  /// Encodes the value. A number goes as an `Int64` when its text is one, else as the nearest
  /// `Double` (exact when the `Double` spells it).
  /// - Parameter encoder: the encoder.
  /// - Throws: what the encoder throws; `EncodingError` for a value nested deeper than 512
  ///   levels.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    if encoder.userInfo[Self.codedAsText] as? Bool == true {
      try container.encode(jsonText)
      return
    }
    guard encoder.codingPath.count < Self.codableDepth else {
      throw EncodingError.invalidValue(
        self,
        .init(
          codingPath: encoder.codingPath,
          debugDescription: "Nested deeper than \(Self.codableDepth) levels."))
    }
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .number(let value):
      if let integer = value.plainInteger ?? Int64(value.description) {
        try container.encode(integer)
      } else {
        try container.encode(value.doubleValue)
      }
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }

  /// Whether two values are the same JSON: numbers compare by value (`1.0` equals `1`),
  /// objects whatever their members' order. A loop, not a recursion: any nesting is safe.
  /// - Parameters:
  ///   - lhs: a value.
  ///   - rhs: another.
  /// - Returns: true when they are the same JSON.
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    // Containers of the same kind and size wait here to have their items compared.
    var pending: [(JSONValue, JSONValue)] = []
    guard shallowEqual(lhs, rhs, deferring: &pending) else { return false }
    while let pair = pending.popLast() {
      switch pair {
      case (.array(let a), .array(let b)):
        for index in a.indices {
          guard shallowEqual(a[index], b[index], deferring: &pending) else { return false }
        }
      case (.object(let a), .object(let b)):
        for (key, value) in a {
          guard let other = b[key], shallowEqual(value, other, deferring: &pending) else {
            return false
          }
        }
      default: continue
      }
    }
    return true
  }

  /// Whether two values can be equal: scalars compared, containers by kind and size (a pair
  /// with items is appended to `pending`, whose items decide).
  private static func shallowEqual(
    _ lhs: JSONValue, _ rhs: JSONValue, deferring pending: inout [(JSONValue, JSONValue)]
  ) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.number(let a), .number(let b)): return a == b
    case (.string(let a), .string(let b)): return a == b
    case (.array(let a), .array(let b)):
      guard a.count == b.count else { return false }
      if !a.isEmpty { pending.append((lhs, rhs)) }
      return true
    case (.object(let a), .object(let b)):
      guard a.count == b.count else { return false }
      if !a.isEmpty { pending.append((lhs, rhs)) }
      return true
    default: return false
    }
  }

  /// Hashes the value so that equal values hash alike: numbers by value, an object's members
  /// in the order of their names. A loop, not a recursion.
  /// - Parameter hasher: the hasher.
  public func hash(into hasher: inout Hasher) {
    // What is left to hash, last first: values, and the names of members before their values.
    var pending: [HashStep] = [.value(self)]
    while let step = pending.popLast() {
      switch step {
      case .name(let name):
        hasher.combine(name)
      case .value(.null): hasher.combine(0)
      case .value(.bool(let value)):
        hasher.combine(1)
        hasher.combine(value)
      case .value(.number(let value)):
        hasher.combine(2)
        hasher.combine(value)
      case .value(.string(let value)):
        hasher.combine(3)
        hasher.combine(value)
      case .value(.array(let items)):
        hasher.combine(4)
        hasher.combine(items.count)
        for item in items.reversed() { pending.append(.value(item)) }
      case .value(.object(let members)):
        hasher.combine(5)
        hasher.combine(members.count)
        for (name, value) in Self.sorted(members).reversed() {
          pending.append(.value(value))
          pending.append(.name(name))
        }
      }
    }
  }

  private enum HashStep {
    case value(JSONValue)
    case name(String)
  }

  /// An object's members in the order of their names' UTF-8 bytes.
  static func sorted(_ members: [String: JSONValue]) -> [(key: String, value: JSONValue)] {
    members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
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
    guard case .number(let number) = self, let value = number.int64Value else { return nil }
    return Int(exactly: value)
  }

  /// The number as a `Double` (an integer beyond 2^53 rounds), when this is a number.
  package var doubleValue: Double? {
    if case .number(let number) = self { return number.doubleValue }
    return nil
  }

  /// How deeply arrays and objects nest in the value: 0 for a scalar, 1 for `[]` or `[1]`.
  package var depth: Int {
    var deepest = 0
    var pending: [(JSONValue, Int)] = [(self, 0)]
    while let (value, level) = pending.popLast() {
      switch value {
      case .array(let items):
        deepest = max(deepest, level + 1)
        for item in items { pending.append((item, level + 1)) }
      case .object(let members):
        deepest = max(deepest, level + 1)
        for item in members.values { pending.append((item, level + 1)) }
      default: continue
      }
    }
    return deepest
  }

  /// Compact JSON text, keys sorted by their UTF-8 bytes, numbers as their text, written
  /// directly (no `JSONEncoder`: the local store writes every payload with it, and Foundation's
  /// encoder cost several times as much, Docs/benchmarks/sync.md, and rounds numbers).
  /// `JSONValue(parsing:)` reads it back to the same value and the same text. A loop, not a
  /// recursion: any nesting is safe.
  package var jsonText: String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(64)
    write(into: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends `jsonText`'s bytes.
  /// - Parameter bytes: where they go.
  package func write(into bytes: inout [UInt8]) {
    // The arrays and objects being written, outermost first, each with the next item's index.
    var open: [WriteFrame] = []
    var value = self
    while true {
      switch value {
      case .null: bytes.append(contentsOf: "null".utf8)
      case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
      case .number(let number): bytes.append(contentsOf: number.description.utf8)
      case .string(let text): Self.write(string: text, into: &bytes)
      case .array(let items):
        bytes.append(UInt8(ascii: "["))
        open.append(WriteFrame(items: items))
      case .object(let members):
        bytes.append(UInt8(ascii: "{"))
        let sorted = Self.sorted(members)
        open.append(WriteFrame(names: sorted.map(\.key), items: sorted.map(\.value)))
      }
      // The next item of the innermost container that has one; each finished one is closed.
      while let frame = open.last, frame.next == frame.items.count {
        bytes.append(UInt8(ascii: frame.names == nil ? "]" : "}"))
        open.removeLast()
      }
      guard !open.isEmpty else { return }
      let last = open.count - 1
      let next = open[last].next
      if next > 0 { bytes.append(UInt8(ascii: ",")) }
      if let names = open[last].names {
        Self.write(string: names[next], into: &bytes)
        bytes.append(UInt8(ascii: ":"))
      }
      value = open[last].items[next]
      open[last].next += 1
    }
  }

  private struct WriteFrame {
    var names: [String]?
    var items: [JSONValue]
    var next = 0
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
