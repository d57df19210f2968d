/// The codes (`CourierError.code`) of the TLS failures a person can act on, each with its own
/// sentence in the domain's message table: the transports' error tables name them, so every
/// adapter that can tell them apart says the same thing (decision 2430).
package enum TLSFailureCode {
  /// The server's public key is none of the pinned ones (`pinned_public_keys`).
  package static let pinMismatch = "tls_pin_mismatch"
  /// The server's certificate did not verify: an authority not trusted, expired, another name.
  package static let untrusted = "tls_untrusted"
  /// The client certificate or its key could not be used, or the server refused it.
  package static let clientCertificate = "tls_client_certificate"
  /// The CA bundle (`ca_bundle`) could not be read as PEM certificates.
  package static let caBundle = "tls_ca_bundle"
}
