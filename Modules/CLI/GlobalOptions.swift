#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Options every command accepts.
public struct GlobalOptions: Sendable, Equatable {
  /// `--base-url`.
  public var baseURL: String?
  /// `--config`.
  public var configFile: String?
  /// `--data-dir`.
  public var dataDir: String?
  /// `--transport`.
  public var transport: String?
  /// `--timeout` in seconds (per attempt).
  public var timeout: String?
  /// `--max-attempts`.
  public var maxAttempts: String?
  /// `--conflict-policy`: how version conflicts are settled (`conflict_policy`).
  public var conflictPolicy: String?
  /// `--json`: one JSON object per line, for scripts.
  public var json = false
  /// `--verbose`: each request and retry decision on standard error.
  public var verbose = false

  /// Creates defaults.
  public init() {}

  /// The values that map to configuration keys.
  public var configFlags: [String: String] {
    var flags: [String: String] = [:]
    flags["base_url"] = baseURL
    flags["config"] = configFile
    flags["data_dir"] = dataDir
    flags["transport"] = transport
    flags["timeout_seconds"] = timeout
    flags["max_attempts"] = maxAttempts
    flags["conflict_policy"] = conflictPolicy
    return flags
  }
}
