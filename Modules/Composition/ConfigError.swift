import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A configuration error: names the source (file, environment variable or flag) and the key.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Where the bad value came from: a file path, `environment` or `command line`.
  package var source: String
  /// The configuration key that is wrong (`conflict_policy`), when one is.
  package var key: String?
  /// What is wrong, for a person.
  package var message: String

  /// Creates an error.
  /// - Parameters:
  ///   - source: where the value came from.
  ///   - key: the key.
  ///   - message: what is wrong.
  package init(source: String, key: String? = nil, message: String) {
    self.source = source
    self.key = key
    self.message = message
  }

  /// "config.json: key \"transport\": ..."
  public var description: String {
    "\(source): " + (key.map { "\"\($0)\": " } ?? "") + message
  }
}
