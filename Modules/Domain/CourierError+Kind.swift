extension CourierError {
  /// What went wrong: the kinds retries, messages and exit codes are decided by.
  ///
  /// A struct over a private code rather than an enum, so that a kind added later breaks no
  /// one's `switch` (as async-http-client's `HTTPClientError` does it). Match a kind with
  /// `error.kind == .offline`, with `switch error.kind { case .offline: … default: … }`, or
  /// catch one with `catch CourierError.offline`.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    /// The kinds, for Courier's own exhaustive switches.
    package enum Code: String, Sendable, CaseIterable {
      /// No usable network path: the device is offline.
      case offline
      /// The request or the whole operation ran past its deadline.
      case timedOut
      /// The host refused or could not be reached while the network itself looked fine.
      case cannotReachHost
      /// The host name could not be resolved.
      case dns
      /// A secure connection could not be established (certificate, protocol).
      case tls
      /// The connection dropped mid-exchange.
      case connectionLost
      /// The server failed (500, 502, 504 and other 5xx).
      case server
      /// The server is overloaded (429, 503), maybe with a `Retry-After`.
      case overloaded
      /// Missing, expired or refused credentials (401).
      case unauthorized
      /// The server refused the request for a business reason (400, 403, 404, 409, 413, 422, 428).
      case business
      /// The record changed on the server since the version the client based its edit on (409).
      case conflict
      /// The server's reply was not a valid HTTP response for this request.
      case invalidResponse
      /// The server's reply could not be decoded into the expected value.
      case decoding
      /// The caller cancelled.
      case cancelled
      /// The caller's own input was unusable (a bad URL, a field that cannot be sent).
      case invalidInput
      /// A local file was missing or unreadable.
      case fileUnavailable
      /// Something on the network answered, but not the intended server, or not with a reply
      /// that proves it applied the request: a Wi-Fi login page (captive portal), a proxy, a
      /// redirect to another site, a 2xx without the expected record, a truncated body. Nothing
      /// is known to have been applied; a queued write stays pending with the same
      /// Idempotency-Key, so sending it again later is safe.
      case notTheServer
      /// The local data store (the data directory, `courier.sqlite`, the journal, the session
      /// file) could not be created, read or written: unwritable or full disk, a damaged or
      /// newer-schema file, a path that is a folder. `serverMessage` names the file and what to do.
      case localStore
      /// A failure Courier has no better kind for (a bug, or an error from a dependency it does
      /// not know); `underlying` says what it was.
      case unexpected
    }

    /// Which kind this is.
    package let code: Code

    /// A kind.
    /// - Parameter code: which.
    package init(_ code: Code) { self.code = code }

    /// The kind a name spells (`offline`, `timedOut`...), or nil.
    /// - Parameter rawValue: the name.
    package init?(rawValue: String) {
      guard let code = Code(rawValue: rawValue) else { return nil }
      self.code = code
    }

    /// Every kind.
    package static let allCases = Code.allCases.map(Kind.init)

    /// The kind's name, as logs, metrics and `--json` spell it.
    package var rawValue: String { code.rawValue }

    /// The kind's name (`offline`, `timedOut`, `overloaded`...), the value of the log metadata
    /// key `courier.error.kind` and of the metrics' `outcome` and `reason` dimensions.
    public var description: String { code.rawValue }

    /// Whether `error` is a `CourierError` of this kind: what makes
    /// `catch CourierError.offline` work.
    /// - Parameters:
    ///   - kind: the kind the pattern names.
    ///   - error: the error thrown.
    /// - Returns: true when `error` is a `CourierError` of `kind`.
    public static func ~= (kind: Kind, error: any Error) -> Bool {
      (error as? CourierError)?.kind == kind
    }
  }
}
