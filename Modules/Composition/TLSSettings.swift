import CourierCurl
import CourierDomain
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The TLS settings of a configuration (decision 2430): their spelling in every layer, their
/// checks, and what the curl transport gets from them.
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

  /// The settings as the curl transport takes them.
  /// - Parameter config: the configuration.
  /// - Returns: the transport's TLS settings.
  static func curl(_ config: CourierConfig) -> CurlTransport.TLS {
    CurlTransport.TLS(
      caBundle: config.caBundle, pinnedPublicKeys: config.pinnedPublicKeys,
      clientCertificate: config.clientCertificate, clientKey: config.clientKey)
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

  /// Checks a configuration built in code, before a transport uses it: each pin's spelling,
  /// the combination, and that each file is there to be read (a CA bundle that is missing
  /// would otherwise fail every request as a TLS error).
  /// - Parameter config: the configuration.
  /// - Throws: `ConfigError` naming the key and the file.
  package static func check(_ config: CourierConfig) throws {
    let source = "configuration"
    for pin in config.pinnedPublicKeys {
      do {
        _ = try Self.pin(pin)
      } catch {
        throw ConfigError(source: source, key: "pinned_public_keys", message: error.message)
      }
    }
    try checkCombination(config, source: { _ in source })
    let files: [(String, URL?)] = [
      ("ca_bundle", config.caBundle), ("client_certificate", config.clientCertificate),
      ("client_key", config.clientKey),
    ]
    for case (let key, let url?) in files {
      if let problem = unreadable(FileURLPath.of(url)) {
        throw ConfigError(source: source, key: key, message: problem)
      }
    }
  }

  /// Why a file cannot be read as a settings file, or nil when it can.
  /// - Parameter path: the file.
  /// - Returns: the sentence.
  static func unreadable(_ path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else {
      return "can't read \(LogText.escaped(path)): \(String(cString: strerror(errno)))."
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
      return "\(LogText.escaped(path)) is not a regular file."
    }
    guard access(path, R_OK) == 0 else {
      return "can't read \(LogText.escaped(path)): \(String(cString: strerror(errno)))."
    }
    return nil
  }
}
