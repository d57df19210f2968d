#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The nesting Courier reads: a JSON text may open at most this many arrays and objects inside
/// one another (decision 2428). Deeper text is refused, naming where, never cut short. 10,000
/// where threads have glibc's 8 MiB of stack: freeing a value is the Swift runtime's own
/// recursion, about 280 bytes a level, 2.8 MB at the limit (every walk Courier makes of a value
/// is a loop, not a recursion). 1,000 elsewhere, where secondary threads may have 512 KiB
/// (Apple's) or 128 KiB (musl's).
package enum JSONLimits {
  #if canImport(Glibc)
    /// The deepest nesting read.
    package static let maxDepth = 10_000
  #else
    /// The deepest nesting read.
    package static let maxDepth = 1_000
  #endif
}

/// JSON text (RFC 8259) read over bytes, straight into a `Value`, with a loop and a stack of
/// its own rather than recursion: no input can exhaust the machine stack.
///
/// `JSONDecoder` reaches a JSON value by trying each case in turn and throwing a
/// `DecodingError` for every miss; on the sync replay that was about a tenth of the client's
/// CPU (Docs/benchmarks/sync.md). This reads each byte once. Any value may stand at the top;
/// whitespace around it is allowed; a number is kept as the text that spells it (checked, not
/// converted); of repeated member names the first wins (as with `JSONDecoder`); strings must be
/// valid UTF-8 without raw control characters; nesting stops at `maxDepth` levels
/// (`JSONLimits.maxDepth` unless told), refusing the text with the path to the value that went
/// deeper, or, when `skipsTooDeep`, reading that value as `null` and listing its path in
/// `skipped`. Inlinable, so that the domain's `JSONValue` gets a parser specialised for it.
package struct JSONByteParser<Value: JSONTree> {
  @usableFromInline let bytes: [UInt8]
  @usableFromInline var index = 0
  /// Levels open around the value `value()` reads (`stringMembers`' own object).
  @usableFromInline var outerDepth = 0
  @usableFromInline let maxDepth: Int
  @usableFromInline let skipsTooDeep: Bool
  /// The paths of the values read as `null` for their nesting (with `skipsTooDeep`).
  package var skipped: [[JSONPathStep]] = []

  /// A parser at the start of `bytes`.
  /// - Parameters:
  ///   - bytes: the text.
  ///   - maxDepth: the deepest nesting read.
  ///   - skipsTooDeep: whether a value nested deeper is read as `null` (and its path kept in
  ///     `skipped`) instead of refusing the text; it is checked all the same.
  @inlinable
  package init(_ bytes: [UInt8], maxDepth: Int = JSONLimits.maxDepth, skipsTooDeep: Bool = false) {
    self.bytes = bytes
    self.maxDepth = maxDepth
    self.skipsTooDeep = skipsTooDeep
  }

  /// The one value the text holds, with nothing but whitespace around it.
  /// - Returns: the value.
  /// - Throws: `JSONSyntaxError` naming the byte offset.
  @inlinable
  package mutating func document() throws(JSONSyntaxError) -> Value {
    skipWhitespace()
    let value = try value()
    skipWhitespace()
    guard index == bytes.count else { throw failure("text after the value") }
    return value
  }

  @inlinable
  func failure(_ reason: String) -> JSONSyntaxError {
    JSONSyntaxError(offset: index, reason: reason)
  }

  @inlinable
  mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  /// One value, containers and all: a loop over the bytes with the open containers on a stack
  /// of its own (`open`: whether each is an object; the arrays and objects being filled; each
  /// open object's current member name).
  @inlinable
  mutating func value() throws(JSONSyntaxError) -> Value {
    var open: [Bool] = []
    var arrays: [[Value]] = []
    var objects: [[String: Value]] = []
    var names: [String] = []
    var result: Value
    next: while true {
      skipWhitespace()
      guard index < bytes.count else { throw failure("the text ends where a value should start") }
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        if outerDepth + open.count >= maxDepth {
          let path = Self.path(open, arrays, names)
          guard skipsTooDeep else {
            throw JSONSyntaxError(
              offset: index, reason: "nested deeper than \(maxDepth) levels", tooDeepAt: path)
          }
          try skipContainer()
          skipped.append(path)
          result = .null
          break
        }
        index += 1
        skipWhitespace()
        if byte == UInt8(ascii: "{") {
          if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            result = .object([:])
          } else {
            names.append(try memberName())
            open.append(true)
            objects.append([:])
            continue next
          }
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
          index += 1
          result = .array([])
        } else {
          open.append(false)
          arrays.append([])
          continue next
        }
      case UInt8(ascii: "\""): result = .string(try string())
      case UInt8(ascii: "t"): result = try literal("true", .bool(true))
      case UInt8(ascii: "f"): result = try literal("false", .bool(false))
      case UInt8(ascii: "n"): result = try literal("null", .null)
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        let start = index
        if let integer = try scanNumber() {
          result = .number(integer: integer)
        } else {
          result = .number(literal: text(start, index))
        }
      default: throw failure("unexpected byte 0x\(String(bytes[index], radix: 16))")
      }
      // The value is whole: it goes into the container around it, and each container it
      // closes into the one around that.
      while let isObject = open.last {
        skipWhitespace()
        if isObject {
          // The first of repeated names wins, as with JSONDecoder.
          if objects[objects.count - 1][names[names.count - 1]] == nil {
            objects[objects.count - 1][names[names.count - 1]] = result
          }
          guard index < bytes.count else { throw failure("the text ends inside an object") }
          switch bytes[index] {
          case UInt8(ascii: ","):
            index += 1
            skipWhitespace()
            names[names.count - 1] = try memberName()
            continue next
          case UInt8(ascii: "}"):
            index += 1
            open.removeLast()
            names.removeLast()
            result = .object(objects.removeLast())
          default: throw failure("expected ',' or '}' in an object")
          }
        } else {
          arrays[arrays.count - 1].append(result)
          guard index < bytes.count else { throw failure("the text ends inside an array") }
          switch bytes[index] {
          case UInt8(ascii: ","):
            index += 1
            continue next
          case UInt8(ascii: "]"):
            index += 1
            open.removeLast()
            result = .array(arrays.removeLast())
          default: throw failure("expected ',' or ']' in an array")
          }
        }
      }
      return result
    }
  }

  /// A member's name and the colon after it (whitespace skipped before the name).
  @inlinable
  mutating func memberName() throws(JSONSyntaxError) -> String {
    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
      throw failure("expected a member name")
    }
    let name = try string()
    skipWhitespace()
    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
      throw failure("expected ':' after a member name")
    }
    index += 1
    return name
  }

  /// Where the value about to be read stands: one step per open container.
  @inlinable
  static func path(_ open: [Bool], _ arrays: [[Value]], _ names: [String]) -> [JSONPathStep] {
    var steps: [JSONPathStep] = []
    steps.reserveCapacity(open.count)
    var array = 0
    var object = 0
    for isObject in open {
      if isObject {
        steps.append(.member(names[object]))
        object += 1
      } else {
        steps.append(.element(arrays[array].count))
        array += 1
      }
    }
    return steps
  }

  /// Reads past the container at `index`, however deep, checking it as any text is checked and
  /// building nothing.
  @inlinable
  mutating func skipContainer() throws(JSONSyntaxError) {
    var skipper = JSONByteParser<JSONSkip>(bytes, maxDepth: .max)
    skipper.index = index
    _ = try skipper.value()
    index = skipper.index
  }

  @inlinable
  mutating func literal(_ word: String, _ value: Value) throws(JSONSyntaxError)
    -> Value
  {
    for byte in word.utf8 {
      guard index < bytes.count, bytes[index] == byte else { throw failure("expected \(word)") }
      index += 1
    }
    return value
  }

  @inlinable
  mutating func string() throws(JSONSyntaxError) -> String {
    index += 1  // opening quote
    let start = index
    // Fast path: no escape before the closing quote.
    var ascii = true
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        let text = try utf8(start, index, ascii: ascii)
        index += 1
        return text
      }
      if byte == UInt8(ascii: "\\") { break }
      if byte < 0x20 { throw failure("a control character inside a string") }
      if byte >= 0x80 { ascii = false }
      index += 1
    }
    var text = try utf8(start, index, ascii: ascii)
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return text
      case UInt8(ascii: "\\"):
        index += 1
        text.unicodeScalars.append(try escape())
      case ..<0x20:
        throw failure("a control character inside a string")
      default:
        let runStart = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""),
          bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20
        {
          index += 1
        }
        text += try utf8(runStart, index)
      }
    }
    throw failure("the text ends inside a string")
  }

  @inlinable
  func utf8(_ start: Int, _ end: Int, ascii: Bool = false) throws(JSONSyntaxError)
    -> String
  {
    let text = bytes.withUnsafeBufferPointer { all -> String? in
      let run = UnsafeBufferPointer(rebasing: all[start..<end])
      // ASCII is valid UTF-8 as it is: decoded without the generic validation of
      // String(validating:), a fifth of a projection read's time.
      return ascii ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
    }
    guard let text else {
      throw JSONSyntaxError(offset: start, reason: "a string that is not valid UTF-8")
    }
    return text
  }

  @inlinable
  mutating func escape() throws(JSONSyntaxError) -> Unicode.Scalar {
    guard index < bytes.count else { throw failure("the text ends inside an escape") }
    let byte = bytes[index]
    index += 1
    switch byte {
    case UInt8(ascii: "\""): return "\""
    case UInt8(ascii: "\\"): return "\\"
    case UInt8(ascii: "/"): return "/"
    case UInt8(ascii: "b"): return "\u{08}"
    case UInt8(ascii: "f"): return "\u{0C}"
    case UInt8(ascii: "n"): return "\n"
    case UInt8(ascii: "r"): return "\r"
    case UInt8(ascii: "t"): return "\t"
    case UInt8(ascii: "u"):
      let first = try hex4()
      if (0xD800..<0xDC00).contains(first) {
        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
          bytes[index + 1] == UInt8(ascii: "u")
        else { throw failure("a high surrogate without its low half") }
        index += 2
        let second = try hex4()
        guard (0xDC00..<0xE000).contains(second) else {
          throw failure("a high surrogate without its low half")
        }
        let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        guard let scalar = Unicode.Scalar(combined) else { throw failure("a bad surrogate pair") }
        return scalar
      }
      guard let scalar = Unicode.Scalar(first) else { throw failure("a lone low surrogate") }
      return scalar
    default:
      index -= 1
      throw failure("an unknown escape")
    }
  }

  @inlinable
  mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
    guard index + 4 <= bytes.count else { throw failure("a \\u escape needs four hex digits") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw failure("a \\u escape needs four hex digits")
      }
      value = value << 4 | UInt32(digit)
      index += 1
    }
    return value
  }

  /// A number's text, checked against RFC 8259's grammar and kept as it is spelled.
  @inlinable
  mutating func number() throws(JSONSyntaxError) -> String {
    let start = index
    _ = try scanNumber()
    return text(start, index)
  }

  /// The bytes of `start..<end`, which are ASCII.
  @inlinable
  func text(_ start: Int, _ end: Int) -> String {
    bytes.withUnsafeBufferPointer { all in
      String(decoding: UnsafeBufferPointer(rebasing: all[start..<end]), as: UTF8.self)
    }
  }

  /// Reads past a number, checking RFC 8259's grammar; returns its value when it is plain
  /// digits that `Int64` holds and that `String(value)` spells back (at most 18 digits, not
  /// `-0`), else nil (the caller keeps the text).
  @inlinable
  mutating func scanNumber() throws(JSONSyntaxError) -> Int64? {
    func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    func digits(_ parser: inout JSONByteParser) -> Int {
      let from = parser.index
      while parser.index < parser.bytes.count, isDigit(parser.bytes[parser.index]) {
        parser.index += 1
      }
      return parser.index - from
    }
    let negative = bytes[index] == UInt8(ascii: "-")
    if negative { index += 1 }
    guard index < bytes.count else { throw failure("a number without digits") }
    var magnitude: Int64 = 0
    var count = 0
    if bytes[index] == UInt8(ascii: "0") {
      index += 1
      count = 1
    } else {
      while index < bytes.count, isDigit(bytes[index]) {
        if count < 18 { magnitude = magnitude * 10 + Int64(bytes[index] &- UInt8(ascii: "0")) }
        count += 1
        index += 1
      }
      guard count > 0 else { throw failure("a number without digits") }
    }
    var plain = true
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      plain = false
      index += 1
      guard digits(&self) > 0 else { throw failure("a fraction without digits") }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      plain = false
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
      {
        index += 1
      }
      guard digits(&self) > 0 else { throw failure("an exponent without digits") }
    }
    guard plain, count <= 18, !(negative && magnitude == 0) else { return nil }
    return negative ? -magnitude : magnitude
  }
}
