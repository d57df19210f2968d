import Foundation

/// An HTTP method.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The method's token, upper case (`GET`).
  public let rawValue: String

  /// Creates a method from its token.
  /// - Parameter rawValue: the method token; it is upper-cased.
  public init(rawValue: String) { self.rawValue = rawValue.uppercased() }

  /// `GET`: reads a resource; safe and idempotent, so safe to retry.
  public static let get = HTTPMethod(rawValue: "GET")
  /// `HEAD`: a `GET` without the body; safe and idempotent.
  public static let head = HTTPMethod(rawValue: "HEAD")
  /// `POST`: creates or acts; safe to retry only under an `Idempotency-Key`.
  public static let post = HTTPMethod(rawValue: "POST")
  /// `PUT`: replaces a resource; idempotent.
  public static let put = HTTPMethod(rawValue: "PUT")
  /// `PATCH`: changes part of a resource; safe to retry only under an `Idempotency-Key`.
  public static let patch = HTTPMethod(rawValue: "PATCH")
  /// `DELETE`: removes a resource; idempotent.
  public static let delete = HTTPMethod(rawValue: "DELETE")
  /// `OPTIONS`: asks what a resource allows; safe and idempotent.
  public static let options = HTTPMethod(rawValue: "OPTIONS")

  /// Whether RFC 9110 defines the method as idempotent: sending it twice has the effect of once.
  public var isIdempotent: Bool {
    switch rawValue {
    case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": return true
    default: return false
    }
  }

  /// The method token.
  public var description: String { rawValue }
}

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
    get { fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value }
    set {
      fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
      if let newValue { fields.append((name: name, value: newValue)) }
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
        $0.name.lowercased() == $1.name.lowercased() && $0.value == $1.value
      }
  }

  /// A copy fit for a log: credentials and cookies are replaced by `<redacted>`.
  public var redacted: HTTPHeaders {
    let secret: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    return HTTPHeaders(
      fields.map { secret.contains($0.name.lowercased()) ? ($0.name, "<redacted>") : $0 })
  }
}

/// A request as the project speaks of it, independent of any HTTP library.
public struct HTTPRequest: Sendable, Equatable {
  /// What the request does to the resource (`GET`, `POST`, …).
  public var method: HTTPMethod
  /// The absolute URL.
  public var url: URL
  /// The header fields.
  public var headers: HTTPHeaders

  /// Creates a request. Its body, if any, is given beside it when it is sent
  /// (`Transport.send(_:body:options:)`).
  /// - Parameters:
  ///   - method: the method.
  ///   - url: the absolute URL.
  ///   - headers: the header fields.
  public init(method: HTTPMethod, url: URL, headers: HTTPHeaders = [:]) {
    self.method = method
    self.url = url
    self.headers = headers
  }

  /// Whether sending this request twice is harmless: an idempotent method, or an
  /// `Idempotency-Key` the server deduplicates on.
  public var isSafeToRepeat: Bool {
    method.isIdempotent || headers["Idempotency-Key"] != nil
  }

  /// A short description for logs and messages: method and path, never headers or body.
  public var summary: String { "\(method) \(url.path.isEmpty ? "/" : url.path)" }
}

/// A response as received, of any status.
public struct HTTPResponse: Sendable, Equatable {
  /// The status code.
  public var status: Int
  /// The header fields.
  public var headers: HTTPHeaders
  /// The response's bytes, decompressed, as the server sent them (possibly empty).
  public var body: Data
  /// How many attempts the pipeline made to get this response (1 without retries).
  public var attempts: Int
  /// The pipeline's verdict on this response when it is a failure, set by the one step that
  /// classified it (the retry step) so that nothing classifies it again; nil for a success or
  /// a response no step has classified yet.
  public var failure: CourierError?

  /// Creates a response.
  /// - Parameters:
  ///   - status: the status code.
  ///   - headers: the header fields.
  ///   - body: the body.
  ///   - attempts: how many attempts were made.
  public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), attempts: Int = 1) {
    self.status = status
    self.headers = headers
    self.body = body
    self.attempts = attempts
  }

  /// Whether the status is 2xx or 304 Not Modified.
  public var isSuccess: Bool { (200..<300).contains(status) || status == 304 }
}

/// Bytes sent so far and the total, for progress reports.
public struct TransferProgress: Sendable, Equatable {
  /// Bytes sent so far.
  public var sent: Int64
  /// Total bytes to send, when known.
  public var total: Int64

  /// Creates a progress value.
  /// - Parameters:
  ///   - sent: bytes sent so far.
  ///   - total: total bytes to send.
  public init(sent: Int64, total: Int64) {
    self.sent = sent
    self.total = total
  }

  /// Sent over total in 0...1 (0 while the total is unknown).
  public var fraction: Double { total > 0 ? min(1, Double(sent) / Double(total)) : 0 }
}
