import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

// The system target's byte parser builds a `JSONValue` through its cases.
extension JSONValue: JSONTree {}

extension JSONValue {
  /// Why some bytes are not JSON: the byte offset where reading stopped, and what was wrong
  /// there.
  public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset where reading stopped.
    package var offset: Int
    /// What was wrong there.
    package var reason: String

    package init(_ error: JSONSyntaxError) {
      offset = error.offset
      reason = error.reason
    }

    /// "not JSON at byte 12: expected ':' after a member name".
    public var description: String { "not JSON at byte \(offset): \(reason)" }
  }

  /// Parses JSON text (RFC 8259) straight into a value, reading each byte once.
  ///
  /// Any value may stand at the top; whitespace around it is allowed; a number whose value is
  /// whole and fits in 64 bits becomes `.integer`, exactly, and any other number a `Double`; of
  /// repeated member names the first wins (as with `JSONDecoder`); strings must be valid UTF-8
  /// without raw control characters; nesting stops at 512 levels.
  /// - Parameter data: the text.
  /// - Throws: `ParseError` naming the byte offset.
  public init(parsing data: Data) throws(ParseError) {
    var parser = JSONByteParser<JSONValue>(Array(data))
    do throws(JSONSyntaxError) {
      self = try parser.document()
    } catch {
      throw ParseError(error)
    }
  }

  /// Parses JSON text held in a string, as the `Data` parser reads its UTF-8 bytes.
  /// - Parameter text: the text.
  /// - Throws: `ParseError` naming the byte offset.
  package init(parsing text: String) throws(ParseError) {
    var parser = JSONByteParser<JSONValue>(Array(text.utf8))
    do throws(JSONSyntaxError) {
      self = try parser.document()
    } catch {
      throw ParseError(error)
    }
  }
}
