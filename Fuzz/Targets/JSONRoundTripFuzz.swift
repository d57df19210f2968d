// libFuzzer target: JSON text → JSONValue → the local store's form → JSON text (decision 2428).
// Built by scripts/fuzz.
import CourierDomain
import Foundation

/// Bytes → `JSONValue(parsing:)` → `jsonText` (what the SQLite store writes and the replay
/// sends) → parse again. What parses must come back as the canonical form of the input, which
/// `Canonical` below works out on its own from the bytes (every number's text as written,
/// strings unescaped and escaped again, objects' first member of a name, keys in UTF-8 order,
/// no whitespace); that form must read back to an equal value with the same hash and write
/// the same bytes again; the two readers agree on what is JSON at all; and a parse that skips
/// nesting too deep skips nothing in a text within the limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONRoundTrip(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let reference = Canonical.form(bytes)
  let value: JSONValue
  do {
    value = try JSONValue(parsing: Data(bytes))
  } catch {
    switch reference {
    case .form(let form):
      fatalError(
        "the parser refused what the reference reads (\(error)): \(String(decoding: form, as: UTF8.self))"
      )
    case .tooDeep:
      check(error.tooDeepAt != nil, "refused for its nesting, but as \(error)")
    case .invalid, .unchecked: break
    }
    return 0
  }
  let stored = value.jsonText
  switch reference {
  case .form(let form):
    check(
      Array(stored.utf8) == form,
      "not the input's canonical form: \(stored) against \(String(decoding: form, as: UTF8.self))")
  case .invalid: fatalError("the parser read what is not JSON: \(stored)")
  case .tooDeep: fatalError("the parser read what is nested past its limit")
  case .unchecked: break
  }
  guard let again = try? JSONValue(parsing: stored) else {
    fatalError("the store's form does not parse: \(stored)")
  }
  check(again == value, "store form → parse changed the value: \(stored)")
  check(again.hashValue == value.hashValue, "equal values hash apart: \(stored)")
  check(again.jsonText == stored, "the store's form is not a fixed point: \(stored)")
  if let (skipping, skipped) = try? JSONValue.parsingSkippingTooDeep(Data(bytes)) {
    check(skipped.isEmpty && skipping == value, "the skipping parse differs: \(stored)")
  } else {
    fatalError("the skipping parse refused what the parser read: \(stored)")
  }
  return 0
}

/// An independent reading of JSON text (RFC 8259) into its canonical form, by plain recursion
/// on the bytes: deliberately not the code under test. Texts nested deeper than `recursion`
/// are left unchecked (the recursion would need more stack than a fuzzer's thread has).
enum Canonical {
  enum Result {
    case form([UInt8])
    case invalid
    case tooDeep
    case unchecked
  }

  static let recursion = 600

  struct Failure: Error {}
  struct TooDeep: Error {}

  static func form(_ bytes: [UInt8]) -> Result {
    var deepest = 0
    var depth = 0
    for byte in bytes {
      if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
        depth += 1
        deepest = max(deepest, depth)
      } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
        depth -= 1
      }
    }
    // Brackets inside strings count too: a bound, not the nesting.
    guard deepest <= recursion else { return .unchecked }
    var reader = Reader(bytes: bytes)
    do {
      reader.blank()
      var out: [UInt8] = []
      try reader.value(into: &out, depth: 0)
      reader.blank()
      guard reader.index == bytes.count else { return .invalid }
      return .form(out)
    } catch is TooDeep {
      return .tooDeep
    } catch {
      return .invalid
    }
  }

  struct Reader {
    let bytes: [UInt8]
    var index = 0

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func blank() {
      while let byte = peek(), [0x20, 0x09, 0x0A, 0x0D].contains(byte) { index += 1 }
    }

    mutating func expect(_ byte: UInt8) throws {
      guard peek() == byte else { throw Failure() }
      index += 1
    }

    mutating func value(into out: inout [UInt8], depth: Int) throws {
      guard let byte = peek() else { throw Failure() }
      switch byte {
      case UInt8(ascii: "["):
        guard depth < JSONValue.maximumDepth else { throw TooDeep() }
        index += 1
        blank()
        out.append(UInt8(ascii: "["))
        if peek() == UInt8(ascii: "]") {
          index += 1
        } else {
          var first = true
          while true {
            blank()
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            try value(into: &out, depth: depth + 1)
            blank()
            if peek() == UInt8(ascii: ",") {
              index += 1
              continue
            }
            try expect(UInt8(ascii: "]"))
            break
          }
        }
        out.append(UInt8(ascii: "]"))
      case UInt8(ascii: "{"):
        guard depth < JSONValue.maximumDepth else { throw TooDeep() }
        index += 1
        blank()
        // Names compare as Swift strings do (canonical equivalence), as a dictionary keeps
        // them: the first member of a name wins, with its own spelling.
        var members: [String: [UInt8]] = [:]
        if peek() == UInt8(ascii: "}") {
          index += 1
        } else {
          while true {
            blank()
            let name = try string()
            blank()
            try expect(UInt8(ascii: ":"))
            blank()
            var member: [UInt8] = []
            try value(into: &member, depth: depth + 1)
            if members[name] == nil { members[name] = member }
            blank()
            if peek() == UInt8(ascii: ",") {
              index += 1
              continue
            }
            try expect(UInt8(ascii: "}"))
            break
          }
        }
        out.append(UInt8(ascii: "{"))
        let names = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (position, name) in names.enumerated() {
          if position > 0 { out.append(UInt8(ascii: ",")) }
          escape(name, into: &out)
          out.append(UInt8(ascii: ":"))
          out += members[name] ?? []
        }
        out.append(UInt8(ascii: "}"))
      case UInt8(ascii: "\""):
        escape(try string(), into: &out)
      case UInt8(ascii: "t"): try word("true", into: &out)
      case UInt8(ascii: "f"): try word("false", into: &out)
      case UInt8(ascii: "n"): try word("null", into: &out)
      default: try number(into: &out)
      }
    }

    mutating func word(_ word: String, into out: inout [UInt8]) throws {
      for byte in word.utf8 { try expect(byte) }
      out += Array(word.utf8)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, copied as written.
    mutating func number(into out: inout [UInt8]) throws {
      let start = index
      func digits(_ reader: inout Reader) -> Int {
        var count = 0
        while let byte = reader.peek(), (0x30...0x39).contains(byte) {
          reader.index += 1
          count += 1
        }
        return count
      }
      if peek() == UInt8(ascii: "-") { index += 1 }
      if peek() == UInt8(ascii: "0") {
        index += 1
      } else if digits(&self) == 0 {
        throw Failure()
      }
      if peek() == UInt8(ascii: ".") {
        index += 1
        guard digits(&self) > 0 else { throw Failure() }
      }
      if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
        index += 1
        if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
        guard digits(&self) > 0 else { throw Failure() }
      }
      out += bytes[start..<index]
    }

    /// A string's scalars: escapes decoded (a surrogate pair as one scalar, a lone half
    /// refused), the rest valid UTF-8 without raw control characters.
    mutating func string() throws -> String {
      try expect(UInt8(ascii: "\""))
      var scalars = String.UnicodeScalarView()
      var run: [UInt8] = []
      func flush() throws {
        guard let text = String(validating: run, as: UTF8.self) else { throw Failure() }
        scalars.append(contentsOf: text.unicodeScalars)
        run.removeAll()
      }
      while true {
        guard let byte = peek() else { throw Failure() }
        index += 1
        switch byte {
        case UInt8(ascii: "\""):
          try flush()
          return String(scalars)
        case UInt8(ascii: "\\"):
          try flush()
          guard let escape = peek() else { throw Failure() }
          index += 1
          switch escape {
          case UInt8(ascii: "\""): scalars.append("\"")
          case UInt8(ascii: "\\"): scalars.append("\\")
          case UInt8(ascii: "/"): scalars.append("/")
          case UInt8(ascii: "b"): scalars.append("\u{08}")
          case UInt8(ascii: "f"): scalars.append("\u{0C}")
          case UInt8(ascii: "n"): scalars.append("\n")
          case UInt8(ascii: "r"): scalars.append("\r")
          case UInt8(ascii: "t"): scalars.append("\t")
          case UInt8(ascii: "u"):
            let first = try hex()
            var code = first
            if (0xD800..<0xDC00).contains(first) {
              try expect(UInt8(ascii: "\\"))
              try expect(UInt8(ascii: "u"))
              let second = try hex()
              guard (0xDC00..<0xE000).contains(second) else { throw Failure() }
              code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(code) else { throw Failure() }
            scalars.append(scalar)
          default: throw Failure()
          }
        default:
          guard byte >= 0x20 else { throw Failure() }
          run.append(byte)
        }
      }
    }

    mutating func hex() throws -> UInt32 {
      var value: UInt32 = 0
      for _ in 0..<4 {
        guard let byte = peek(), let digit = Int(String(UnicodeScalar(byte)), radix: 16) else {
          throw Failure()
        }
        index += 1
        value = value << 4 | UInt32(digit)
      }
      return value
    }

    /// The canonical escaping: `"` `\` and the control characters, `\n` `\r` `\t` by name and
    /// the others as `\u00XX`; every other scalar as its UTF-8.
    func escape(_ text: String, into out: inout [UInt8]) {
      out.append(UInt8(ascii: "\""))
      for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
        case 0x0A: out += Array("\\n".utf8)
        case 0x0D: out += Array("\\r".utf8)
        case 0x09: out += Array("\\t".utf8)
        case 0..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
        default: out.append(byte)
        }
      }
      out.append(UInt8(ascii: "\""))
    }
  }
}
