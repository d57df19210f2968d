/// What a failed exchange was, as the error tables tell it: the kinds of `CourierError` a
/// transport failure can have, named alike (the domain turns one into its `CourierError.Kind`).
package enum TransportFailure: String, Sendable, CaseIterable {
  /// No usable network path.
  case offline
  /// The host name could not be resolved.
  case dns
  /// No connection to the host could be made.
  case cannotReachHost
  /// The deadline passed.
  case timedOut
  /// The connection dropped, or a local failure ended the exchange.
  case connectionLost
  /// The TLS handshake or the certificate failed.
  case tls
  /// The reply was not HTTP, or not one the transport can take.
  case invalidResponse
  /// The caller cancelled.
  case cancelled
  /// The request body's file could not be read.
  case fileUnavailable
  /// The request itself was unusable (a malformed URL).
  case invalidInput
}
