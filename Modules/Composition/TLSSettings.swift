import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The TLS settings of a configuration (decision 2430): their spelling in every layer and the
/// checks the loader makes (what the environment checks and the curl transport gets from them
/// is in `TLSSettings+Files.swift`, apart, so that the config fuzzer builds without libcurl).
package enum TLSSettings {
  /// The configuration keys of the TLS settings a transport must honour.
  package static let keys = ["ca_bundle", "pinned_public_keys", "client_certificate", "client_key"]

  /// The pins a value lists, separated by commas or blanks (the environment and the flags; a
  /// file may also give a JSON array), each `sha256/BASE64` of 32 bytes; curl's own spelling
  /// `sha256//BASE64` is taken too.
  /// - Parameter value: the value.
  /// - Returns: the pins, each spelled `sha256/BASE64`; empty for an empty value.
  /// - Throws: a sentence saying which pin is wrong and how one is spelled.
  package static func pins(_ value: String) throws(PinError) -> [String] {
    let items = value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
    return try items.map { item throws(PinError) in try pin(String(item)) }
  }

  /// One pin, checked and spelled `sha256/BASE64`.
  /// - Parameter text: the pin.
  /// - Returns: the pin.
  /// - Throws: `PinError` when it is not `sha256/` and the base64 of 32 bytes.
  package static func pin(_ text: String) throws(PinError) -> String {
    guard text.hasPrefix("sha256/") else { throw PinError(pin: text) }
    let digest = text.dropFirst(7)
    func isSHA256(_ base64: Substring) -> Bool {
      Data(base64Encoded: String(base64))?.count == 32
    }
    // A digest's base64 may itself begin with "/": only when the text after "sha256/" is not
    // one is a leading "/" curl's spelling (`sha256//BASE64`).
    if isSHA256(digest) { return text }
    if digest.hasPrefix("/"), isSHA256(digest.dropFirst()) {
      return "sha256/" + digest.dropFirst()
    }
    throw PinError(pin: text)
  }

  /// A pin that is not `sha256/` and the base64 of a SHA-256.
  package struct PinError: Error, Sendable {
    /// The pin as given.
    package var pin: String

    /// What is wrong, for a person.
    package var message: String {
      "“\(ConfigLoader.shown(pin))” is not a pin: give sha256/ and the base64 of the SHA-256 "
        + "of the server's public key (its DER SubjectPublicKeyInfo), as OkHttp spells it."
    }
  }

  /// Whether a configuration sets any setting a transport must honour for TLS.
  /// - Parameter config: the configuration.
  /// - Returns: true when a CA bundle, a pin or a client certificate is set.
  package static func anySet(_ config: CourierConfig) -> Bool {
    config.caBundle != nil || !config.pinnedPublicKeys.isEmpty
      || config.clientCertificate != nil || config.clientKey != nil
  }

  /// Checks what the layers cannot check one value at a time: a key needs a certificate, and
  /// the URLSession transport takes none of the settings (decision 2432: FoundationNetworking
  /// on Linux offers no reliable way to trust another CA, pin, or present a certificate, and
  /// a setting silently ignored would send the session where the user said it must not go).
  /// - Parameters:
  ///   - config: the configuration.
  ///   - source: where a key's value came from, for the error.
  /// - Throws: `ConfigError` naming the key.
  package static func checkCombination(
    _ config: CourierConfig, source: (_ key: String) -> String
  ) throws {
    if config.clientKey != nil, config.clientCertificate == nil {
      throw ConfigError(
        source: source("client_key"), key: "client_key",
        message: "is set without client_certificate: give the certificate too.")
    }
    #if URLSessionTransport
      if config.transport == .urlsession, anySet(config) {
        let set = keys.filter { key in
          switch key {
          case "ca_bundle": config.caBundle != nil
          case "pinned_public_keys": !config.pinnedPublicKeys.isEmpty
          case "client_certificate": config.clientCertificate != nil
          default: config.clientKey != nil
          }
        }
        throw ConfigError(
          source: source("transport"), key: "transport",
          message: "urlsession can't honour \(set.joined(separator: ", ")) (FoundationNetworking "
            + "takes no CA bundle, pin or client certificate reliably on Linux): use the curl "
            + "transport, the default, or remove \(set.count == 1 ? "it" : "them").")
      }
    #endif
  }
}
