/// Where Courier keeps its files, following the XDG base directory specification: user data
/// that must not be lost (the outbox, local edits) under `$XDG_DATA_HOME/courier`, by default
/// `~/.local/share/courier`; what can be fetched again under `$XDG_CACHE_HOME/courier`, by
/// default `~/.cache/courier`. Pure: it reads an environment dictionary, touches no disk.
public struct DataDirectories: Sendable, Equatable {
  /// The directory for user data (the local store: outbox and local edits).
  public var data: String
  /// The directory for refreshable caches.
  public var cache: String

  /// Creates directories.
  /// - Parameters:
  ///   - data: the user data directory.
  ///   - cache: the cache directory.
  public init(data: String, cache: String) {
    self.data = data
    self.cache = cache
  }

  /// Resolves the directories from an environment (`ProcessInfo.processInfo.environment`).
  /// A relative or empty `XDG_*` variable is ignored, as the specification requires.
  /// - Parameters:
  ///   - environment: the environment variables.
  ///   - name: the application's directory name.
  /// - Returns: the directories.
  /// - Throws: `StoreError.invalidInput` when a default is needed and `HOME` is not an
  ///   absolute path.
  public static func resolve(environment: [String: String], name: String = "courier")
    throws(StoreError) -> DataDirectories
  {
    func base(_ variable: String, fallback: String) throws(StoreError) -> String {
      if let value = environment[variable], value.hasPrefix("/") { return trimmed(value) }
      guard let home = environment["HOME"], home.hasPrefix("/") else {
        throw StoreError(
          .invalidInput,
          "Neither \(variable) nor HOME is set to an absolute path, so Courier cannot tell "
            + "where to keep its files. Set \(variable) or HOME.")
      }
      return join(trimmed(home), fallback)
    }
    let data = try base("XDG_DATA_HOME", fallback: ".local/share")
    let cache = try base("XDG_CACHE_HOME", fallback: ".cache")
    return DataDirectories(data: join(data, name), cache: join(cache, name))
  }

  private static func trimmed(_ path: String) -> String {
    var path = Substring(path)
    while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
    return String(path)
  }

  private static func join(_ base: String, _ name: String) -> String {
    base == "/" ? "/" + name : base + "/" + name
  }
}
