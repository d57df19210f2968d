import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A failure as Courier reports it: what kind it is, whether trying again can help, and what to
/// tell a person. Technical failures (offline, timeout, 5xx) are kept apart from business
/// refusals (a 4xx with the server's message).
public struct CourierError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What went wrong, in the terms retries and messages are decided by.
  public var kind: Kind
  /// The HTTP status, when a response was received.
  public var status: Int?
  /// The machine-readable code: the server's (`image_too_large`) or a local one.
  public var code: String?
  /// The server's message for a person, already checked to be plain text.
  public var serverMessage: String?
  /// The field a validation error is about, when the server names one.
  package var field: String?
  /// The server's current record, carried by a conflict.
  package var current: JSONValue?
  /// How long the server asked the client to wait, when it said.
  package var retryAfter: Duration?
  /// Whether the request may have reached the server before the failure (a timeout after
  /// sending, a reset, a 5xx): repeating it is then safe only if it is idempotent.
  package var mayHaveReachedServer: Bool
  /// How many attempts were made before this error was final.
  public var attempts: Int
  /// A description of the underlying error, for logs only.
  public var underlying: String?
  /// What was being done (`POST /photos`), for logs only.
  public var context: String?

  /// Creates an error.
  /// - Parameters:
  ///   - kind: the kind.
  ///   - status: the HTTP status, if any.
  ///   - code: a machine-readable code.
  ///   - serverMessage: the server's plain-text message.
  ///   - field: the field a validation error names.
  ///   - current: the server's record for a conflict.
  ///   - retryAfter: the wait the server asked for.
  ///   - mayHaveReachedServer: whether the request may have been processed.
  ///   - attempts: attempts made.
  ///   - underlying: the underlying error, for logs.
  ///   - context: what was being done, for logs.
  public init(
    _ kind: Kind, status: Int? = nil, code: String? = nil, serverMessage: String? = nil,
    field: String? = nil, current: JSONValue? = nil, retryAfter: Duration? = nil,
    mayHaveReachedServer: Bool = false, attempts: Int = 1, underlying: String? = nil,
    context: String? = nil
  ) {
    self.kind = kind
    self.status = status
    self.code = code
    self.serverMessage = serverMessage
    self.field = field
    self.current = current
    self.retryAfter = retryAfter
    self.mayHaveReachedServer = mayHaveReachedServer
    self.attempts = attempts
    self.underlying = underlying
    self.context = context
  }

  /// Whether trying again later can succeed. Business refusals, conflicts and 401 never are
  /// (401 gets one token refresh, which is not a retry); `409 idempotency_in_flight` is
  /// reported as `overloaded` and is.
  public var isTransient: Bool {
    switch kind.code {
    case .offline, .timedOut, .cannotReachHost, .dns, .connectionLost, .server, .overloaded,
      .notTheServer:
      return true
    case .tls, .unauthorized, .business, .conflict, .invalidResponse, .decoding, .cancelled,
      .invalidInput, .fileUnavailable, .localStore, .unexpected:
      return false
    }
  }

  /// The sentence to show a person: never a raw status code, a stack trace or HTML.
  public var userMessage: String { UserMessages.message(for: self) }

  /// A one-line description for logs (includes the code and status, never credentials).
  public var description: String {
    var parts = ["\(kind.rawValue)"]
    if let status { parts.append("status \(status)") }
    if let code { parts.append("code \(code)") }
    if let context { parts.append(context) }
    if let underlying { parts.append("(\(underlying))") }
    return parts.joined(separator: ", ") + ": " + userMessage
  }

  /// Wraps any error as a `CourierError`: itself when it already is one, `cancelled` for a
  /// `CancellationError`, `localStore` for a `StoreError` (its message names the file), and
  /// `unexpected` carrying its description for anything else. A local failure is never
  /// reported as the server's fault.
  /// - Parameters:
  ///   - error: the error to wrap.
  ///   - context: what was being done.
  /// - Returns: the wrapped error.
  public static func wrapping(_ error: any Error, context: String? = nil) -> CourierError {
    if let error = error as? CourierError { return error }
    if error is CancellationError {
      return CourierError(.cancelled, underlying: "CancellationError", context: context)
    }
    if let error = error as? StoreError { return CourierError(store: error, context: context) }
    return CourierError(.unexpected, underlying: String(describing: error), context: context)
  }

  /// A local store failure as a `CourierError` of kind `localStore`, code `store_<code>`, with
  /// the store's sentence (which names the file) and what to do about it.
  /// - Parameters:
  ///   - store: the store's error.
  ///   - context: what was being done.
  package init(store: StoreError, context: String? = nil) {
    var message = store.message
    if let advice = store.advice { message += " " + advice }
    self.init(
      .localStore, code: "store_\(store.code.rawValue)", serverMessage: message,
      underlying: store.underlying, context: context ?? store.path)
  }
}

extension CourierError.Kind {
  /// The kind a transport's error table names (the tables live in the system target, below
  /// the domain, and name the same kinds).
  /// - Parameter failure: the table's kind.
  package init(transportFailure failure: TransportFailure) {
    switch failure {
    case .offline: self = .offline
    case .dns: self = .dns
    case .cannotReachHost: self = .cannotReachHost
    case .timedOut: self = .timedOut
    case .connectionLost: self = .connectionLost
    case .tls: self = .tls
    case .invalidResponse: self = .invalidResponse
    case .cancelled: self = .cancelled
    case .fileUnavailable: self = .fileUnavailable
    case .invalidInput: self = .invalidInput
    }
  }
}
