import CourierCore
import CourierCurl
import CourierDomain
import CourierFileStore
import CourierMemory
import CourierNetlink
import CourierPorts
import CourierSQLite
import CourierURLSession
import CourierVips
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Adapters a test or an embedding app supplies instead of the ones named in the config.
public struct AdapterOverrides: Sendable {
  /// The base transport (under auth, retry and logging).
  public var transport: (any Transport)?
  /// The credential store.
  public var credentials: (any CredentialStore)?
  /// The path monitor.
  public var pathMonitor: (any PathMonitor)?
  /// The local store (records and outbox).
  public var localStore: (any LocalStore)?
  /// The image compressor.
  public var compressor: (any ImageCompressor)?

  /// Creates overrides.
  /// - Parameters:
  ///   - transport: the base transport.
  ///   - credentials: the credential store.
  ///   - pathMonitor: the path monitor.
  ///   - localStore: the local store.
  ///   - compressor: the image compressor.
  public init(
    transport: (any Transport)? = nil, credentials: (any CredentialStore)? = nil,
    pathMonitor: (any PathMonitor)? = nil, localStore: (any LocalStore)? = nil,
    compressor: (any ImageCompressor)? = nil
  ) {
    self.transport = transport
    self.credentials = credentials
    self.pathMonitor = pathMonitor
    self.localStore = localStore
    self.compressor = compressor
  }
}

/// The composition root: picks the adapters named in the configuration and builds the request
/// pipeline `Retry(Auth(middlewares(Logging(adapter))))`: user middlewares run once per
/// attempt, after the token is added and before the request is logged and sent (see
/// `ClientMiddleware`). Only this module and the apps import adapters.
public struct CourierEnvironment: Sendable {
  /// The configuration it was built from.
  public let config: CourierConfig
  /// The request pipeline.
  public let client: APIClient
  /// The session's token store.
  public let credentials: any CredentialStore
  /// The base transport, with no decorators (for logins and probes).
  public let baseTransport: any Transport
  /// The path monitor: a hint for the interface and for replays, never a gate. Nobody runs it
  /// until a command needs it (`run()` in a task of the caller's).
  public let pathMonitor: any PathMonitor
  /// The image compressor.
  public let compressor: any ImageCompressor
  private let overrides: AdapterOverrides

  /// Builds the environment.
  /// - Parameters:
  ///   - config: the configuration.
  ///   - overrides: adapters to use instead of the configured ones.
  ///   - log: receives `--verbose` lines (requests and retry decisions); nil for none.
  ///   - middlewares: the user's own steps, outermost first, run inside retry and auth.
  /// - Throws: `ConfigError` for an adapter this build cannot provide.
  public init(
    config: CourierConfig, overrides: AdapterOverrides = AdapterOverrides(),
    log: (@Sendable (String) -> Void)? = nil, middlewares: [any ClientMiddleware] = []
  ) throws {
    self.config = config
    self.overrides = overrides
    let monitor: any PathMonitor
    if let overridden = overrides.pathMonitor {
      monitor = overridden
    } else {
      switch config.pathMonitor {
      case .netlink: monitor = NetlinkPathMonitor()
      case .manual, .none: monitor = ManualPathMonitor()
      }
    }
    pathMonitor = monitor
    compressor = overrides.compressor ?? VipsImageCompressor()
    let base: any Transport
    if let transport = overrides.transport {
      base = transport
    } else {
      switch config.transport {
      case .urlsession: base = URLSessionTransport(pathStatus: { monitor.currentPath.status })
      case .curl:
        base = CurlTransport(configuration: .init(pathStatus: { monitor.currentPath.status }))
      case .memory: base = InMemoryTransport()
      }
    }
    baseTransport = base
    if let overridden = overrides.credentials {
      credentials = overridden
    } else if let token = config.token {
      credentials = StaticCredentialStore(Credentials(accessToken: token))
    } else {
      credentials = FileCredentialStore(
        file: config.dataDirectory.appendingPathComponent("session.json"),
        warn: PrivateFiles.warnOnStandardError)
    }
    var stack: any Transport = base
    if let log { stack = LoggingTransport(stack, log: log) }
    if !middlewares.isEmpty { stack = MiddlewareTransport(stack, middlewares: middlewares) }
    let refreshURL =
      URL(string: config.baseURL.absoluteString.trimmingSuffix("/") + "/auth/refresh")
      ?? config.baseURL
    let authenticator = RefreshTokenAuthenticator(store: credentials, refreshURL: refreshURL)
    stack = AuthTransport(stack, authenticator: authenticator, credentialOrigin: config.baseURL)
    let executor = RetryExecutor(policy: config.retry, clock: ContinuousClock())
    stack = RetryingTransport(stack, executor: executor) { _, event in
      if case .attemptStarted = event { return }
      log?(event.humanDescription)
    }
    client = APIClient(
      baseURL: config.baseURL, transport: stack, options: TransportOptions(deadline: config.timeout)
    )
  }
}

/// A credential store holding one fixed token (from `COURIER_TOKEN`): nothing is written.
public final class StaticCredentialStore: CredentialStore {
  private let credentials: Mutex<Credentials?>

  /// Creates a store.
  /// - Parameter credentials: the fixed credentials.
  public init(_ credentials: Credentials?) { self.credentials = Mutex(credentials) }

  /// The credentials.
  /// - Returns: them.
  public func load() throws -> Credentials? { credentials.withLock { $0 } }

  /// Replaces them in memory.
  /// - Parameter credentials: the credentials.
  public func save(_ credentials: Credentials) throws {
    self.credentials.withLock { $0 = credentials }
  }

  /// Forgets them.
  public func clear() throws { credentials.withLock { $0 = nil } }
}

extension String {
  func trimmingSuffix(_ suffix: Character) -> String {
    var copy = self
    while copy.last == suffix { copy.removeLast() }
    return copy
  }
}

extension CourierEnvironment {
  /// Whether the local store lives in the data directory, where other processes may open it
  /// too (false for an in-memory store or one supplied in the overrides): replays then take
  /// the data directory's `SyncLock`.
  var localStoreIsShared: Bool { overrides.localStore == nil && config.store != .memory }

  /// Opens the local store named in the configuration, in the data directory (user data: the
  /// outbox and local edits live there and are never purged). Each call opens it anew: the
  /// caller owns the returned store.
  ///
  /// The data directory is created with mode 0700; an existing one that group or others can
  /// use is tightened to 0700 and `warn` is told so (decision 0405).
  /// - Parameter warn: receives a sentence for each permission that was tightened; standard
  ///   error by default.
  /// - Returns: the store.
  /// - Throws: `StoreError` naming the file or folder: `cannotCreate` when the data directory
  ///   or the store cannot be created (a file in the way, a folder where the store file should
  ///   be), `io` for an unwritable or full disk, `corrupt`, `newerSchema`, `busy`; nothing that
  ///   exists is reset or overwritten.
  public func openLocalStore(warn: @Sendable (String) -> Void = PrivateFiles.warnOnStandardError)
    throws -> any LocalStore
  {
    if let store = overrides.localStore { return store }
    let directory = config.dataDirectory
    try PrivateFiles.prepareDirectory(directory.path, warn: warn)
    switch config.store {
    case .file:
      return try FileLocalStore(directory: directory.appendingPathComponent("store").path)
    case .memory:
      return InMemoryLocalStore()
    case .sqlite:
      return try SQLiteLocalStore(path: directory.appendingPathComponent("courier.sqlite").path)
    }
  }
}

/// The data directory and the files in it are private to their owner (decision 0405).
public enum PrivateFiles {
  /// Writes a warning to the process's standard error.
  /// - Parameter message: the sentence.
  public static func warnOnStandardError(_ message: String) {
    FileHandle.standardError.write(Data("courier: warning: \(message)\n".utf8))
  }

  /// Creates a directory (and its missing parents) with mode 0700, or tightens an existing one
  /// that group or others may use, with a warning.
  /// - Parameters:
  ///   - path: the directory.
  ///   - warn: receives a sentence when the mode was tightened.
  /// - Throws: `StoreError.cannotCreate` naming the path when a part of it is a file or it
  ///   cannot be created.
  public static func prepareDirectory(_ path: String, warn: (String) -> Void) throws {
    var prefix = path.hasPrefix("/") ? "" : "."
    let parts = path.split(separator: "/", omittingEmptySubsequences: true)
    for (index, part) in parts.enumerated() {
      prefix += "/" + part
      let isLast = index == parts.count - 1
      var info = stat()
      if stat(prefix, &info) == 0 {
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
          throw StoreError(
            .cannotCreate,
            "The data folder \(path) cannot be created: \(prefix) is a file, not a folder.",
            path: prefix)
        }
        if isLast && (info.st_mode & 0o077) != 0 {
          if chmod(prefix, 0o700) == 0 {
            warn(
              "the data folder \(path) could be read by other users (mode "
                + String(info.st_mode & 0o777, radix: 8) + "); it was made private (0700).")
          } else {
            warn(
              "the data folder \(path) can be read by other users (mode "
                + String(info.st_mode & 0o777, radix: 8) + ") and could not be made private: "
                + String(cString: strerror(errno)) + ".")
          }
        }
        continue
      }
      if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
        let code = errno
        throw StoreError(
          code == ENOSPC || code == EIO ? .io : .cannotCreate,
          "The data folder \(path) could not be created (\(prefix)).", path: prefix,
          underlying: String(cString: strerror(code)))
      }
      if isLast { _ = chmod(prefix, 0o700) }  // whatever the umask
    }
  }
}
