import CourierCurl
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

extension TLSSettings {
  /// The settings as the curl transport takes them.
  /// - Parameter config: the configuration.
  /// - Returns: the transport's TLS settings.
  static func curl(_ config: CourierConfig) -> CurlTransport.TLS {
    CurlTransport.TLS(
      caBundle: config.caBundle, pinnedPublicKeys: config.pinnedPublicKeys,
      clientCertificate: config.clientCertificate, clientKey: config.clientKey)
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
