#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Reading only some members of an object as strings, without building the object: what
/// `JSONStringMembers` runs for the SQLite store's field reads.
extension JSONByteParser {
  /// `document()` for an object whose members `names` (as UTF-8) are wanted as strings: the
  /// other members are parsed (and checked) as `document()` parses them, the object itself is
  /// never built (`JSONStringMembers`, which skips them as `JSONSkip`). At most 64 names.
  mutating func stringMembers(_ names: [[UInt8]]) throws(JSONSyntaxError) -> [String?] {
    var found = [String?](repeating: nil, count: names.count)
    var seen: UInt64 = 0
    skipWhitespace()
    guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else {
      _ = try document()
      return found
    }
    outerDepth += 1
    index += 1  // {
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
    } else {
      members: while true {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
          throw failure("expected a member name")
        }
        let wanted = try memberName(in: names)
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
          throw failure("expected ':' after a member name")
        }
        index += 1
        skipWhitespace()
        if let wanted, seen & (1 << UInt64(wanted)) == 0 {
          seen |= 1 << UInt64(wanted)
          if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            found[wanted] = try string()
          } else {
            _ = try value()
          }
        } else {
          _ = try value()
        }
        skipWhitespace()
        guard index < bytes.count else { throw failure("the text ends inside an object") }
        switch bytes[index] {
        case UInt8(ascii: ","): index += 1
        case UInt8(ascii: "}"):
          index += 1
          break members
        default: throw failure("expected ',' or '}' in an object")
        }
      }
    }
    outerDepth -= 1
    skipWhitespace()
    guard index == bytes.count else { throw failure("text after the value") }
    return found
  }

  /// Reads a member name and answers which of `names` it is: compared as bytes when it is
  /// plain ASCII without an escape (no `String` made), else decoded as `string()` does.
  private mutating func memberName(in names: [[UInt8]]) throws(JSONSyntaxError) -> Int? {
    let start = index + 1
    var end = start
    while end < bytes.count {
      let byte = bytes[end]
      if byte == UInt8(ascii: "\"") {
        index = end + 1
        return names.firstIndex { name in
          guard name.count == end - start else { return false }
          var offset = 0
          while offset < name.count {
            if name[offset] != bytes[start + offset] { return false }
            offset += 1
          }
          return true
        }
      }
      if byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
      end += 1
    }
    let name = Array(try string().utf8)
    return names.firstIndex(of: name)
  }
}
