import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

// The system target's byte parser builds a `JSONValue` through its cases.
extension JSONValue: JSONTree {
  /// A number as the parser read it: its text, already checked.
  /// - Parameter text: the number's text.
  /// - Returns: the value.
  package static func number(literal text: String) -> JSONValue {
    .number(JSONNumber(verbatim: text))
  }

  /// A number the parser read as plain digits within 64 bits.
  /// - Parameter value: the number.
  /// - Returns: the value.
  package static func number(integer value: Int64) -> JSONValue {
    .number(JSONNumber(value))
  }
}

extension JSONValue {
  /// Why some bytes are not JSON (the byte offset where reading stopped, and what was wrong
  /// there), or are JSON nested deeper than ``JSONValue/maximumDepth``.
  public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset where reading stopped.
    package var offset: Int
    /// What was wrong there.
    package var reason: String
    /// For a text refused for its nesting alone: the steps from the top to the value that
    /// went one level too deep. Nil for a text that is not JSON.
    package var tooDeepAt: [JSONPathStep]?

    package init(_ error: JSONSyntaxError) {
      offset = error.offset
      reason = error.reason
      tooDeepAt = error.tooDeepAt
    }

    /// "not JSON at byte 12: expected ':' after a member name", or "JSON nested deeper than
    /// 10000 levels at [0].meta (byte 40017)".
    public var description: String {
      JSONSyntaxError(offset: offset, reason: reason, tooDeepAt: tooDeepAt).description
    }
  }

  /// Parses JSON text (RFC 8259) straight into a value, reading each byte once.
  ///
  /// Any value may stand at the top; whitespace around it is allowed; a number keeps the text
  /// that spells it; of repeated member names the first wins (as with `JSONDecoder`); strings
  /// must be valid UTF-8 without raw control characters; nesting deeper than
  /// ``maximumDepth`` is refused. A loop with a stack of its own, not a recursion: no input can
  /// exhaust the machine stack.
  /// - Parameter data: the text.
  /// - Throws: `ParseError` naming the byte offset (and, for nesting, where).
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

  /// Parses JSON text in which values nested deeper than ``maximumDepth`` are read as `null`
  /// and listed, instead of refusing the whole text: for a list whose other records are good.
  /// The skipped values are checked as any text is; the text is refused only when it is not
  /// JSON.
  /// - Parameters:
  ///   - data: the text.
  ///   - maxDepth: the deepest nesting kept (``maximumDepth`` unless told).
  /// - Returns: the value, and the path of each value read as `null` for its nesting.
  /// - Throws: `ParseError` for text that is not JSON.
  package static func parsingSkippingTooDeep(
    _ data: Data, maxDepth: Int = JSONValue.maximumDepth
  ) throws(ParseError) -> (value: JSONValue, tooDeep: [[JSONPathStep]]) {
    var parser = JSONByteParser<JSONValue>(Array(data), maxDepth: maxDepth, skipsTooDeep: true)
    do throws(JSONSyntaxError) {
      let value = try parser.document()
      return (value, parser.skipped)
    } catch {
      throw ParseError(error)
    }
  }
}
