/// The kinds of `CourierError` by name, for both ways of matching them: on
/// ``CourierError/Kind`` (`error.kind == .offline`, `switch error.kind { case .offline: … }`)
/// and on ``CourierError`` (`catch CourierError.offline`). A protocol only so that each kind is
/// named once for both; nothing else conforms to it.
public protocol CourierErrorKindNames {}

extension CourierErrorKindNames {
  /// No usable network path: the device is offline.
  public static var offline: CourierError.Kind { CourierError.Kind(.offline) }
  /// The request or the whole operation ran past its deadline.
  public static var timedOut: CourierError.Kind { CourierError.Kind(.timedOut) }
  /// The host refused or could not be reached while the network itself looked fine.
  public static var cannotReachHost: CourierError.Kind { CourierError.Kind(.cannotReachHost) }
  /// The host name could not be resolved.
  public static var dns: CourierError.Kind { CourierError.Kind(.dns) }
  /// A secure connection could not be established (certificate, protocol).
  public static var tls: CourierError.Kind { CourierError.Kind(.tls) }
  /// The connection dropped mid-exchange.
  public static var connectionLost: CourierError.Kind { CourierError.Kind(.connectionLost) }
  /// The server failed (500, 502, 504 and other 5xx).
  public static var server: CourierError.Kind { CourierError.Kind(.server) }
  /// The server is overloaded (429, 503), maybe with a `Retry-After`.
  public static var overloaded: CourierError.Kind { CourierError.Kind(.overloaded) }
  /// Missing, expired or refused credentials (401).
  public static var unauthorized: CourierError.Kind { CourierError.Kind(.unauthorized) }
  /// The server refused the request for a business reason (400, 403, 404, 409, 413, 422, 428).
  public static var business: CourierError.Kind { CourierError.Kind(.business) }
  /// The record changed on the server since the version the client based its edit on (409).
  public static var conflict: CourierError.Kind { CourierError.Kind(.conflict) }
  /// The server's reply was not a valid HTTP response for this request.
  public static var invalidResponse: CourierError.Kind { CourierError.Kind(.invalidResponse) }
  /// The server's reply could not be decoded into the expected value.
  public static var decoding: CourierError.Kind { CourierError.Kind(.decoding) }
  /// The caller cancelled.
  public static var cancelled: CourierError.Kind { CourierError.Kind(.cancelled) }
  /// The caller's own input was unusable (a bad URL, a field that cannot be sent).
  public static var invalidInput: CourierError.Kind { CourierError.Kind(.invalidInput) }
  /// A local file was missing or unreadable.
  public static var fileUnavailable: CourierError.Kind { CourierError.Kind(.fileUnavailable) }
  /// Something on the network answered, but not the intended server, or not with a reply
  /// that proves it applied the request: a Wi-Fi login page (captive portal), a proxy, a
  /// redirect to another site, a 2xx without the expected record, a truncated body. Nothing
  /// is known to have been applied; a queued write stays pending with the same
  /// Idempotency-Key, so sending it again later is safe.
  public static var notTheServer: CourierError.Kind { CourierError.Kind(.notTheServer) }
  /// The local data store (the data directory, `courier.sqlite`, the journal, the session
  /// file) could not be created, read or written: unwritable or full disk, a damaged or
  /// newer-schema file, a path that is a folder. `serverMessage` names the file and what to do.
  public static var localStore: CourierError.Kind { CourierError.Kind(.localStore) }
  /// A failure Courier has no better kind for (a bug, or an error from a dependency it does
  /// not know); `underlying` says what it was.
  public static var unexpected: CourierError.Kind { CourierError.Kind(.unexpected) }
}

extension CourierError: CourierErrorKindNames {}

extension CourierError.Kind: CourierErrorKindNames {}
