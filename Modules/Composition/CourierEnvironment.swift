import CoreMetrics
import CourierCore
import CourierCurl
import CourierDBus
import CourierDomain
import CourierFileStore
import CourierMemory
import CourierNetlink
import CourierPorts
import CourierSHANI
import CourierSQLite
import CourierSystem
import CourierVips
import HTTPTypes
import Logging
import Synchronization

#if URLSessionTransport
  import CourierURLSession
#endif
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

/// The composition root: picks the adapters named in the configuration and builds the request
/// pipeline `Retry(Auth(middlewares(Logging(Metrics(adapter)))))`: user middlewares run once
/// per attempt, after the token is added and before the request is logged and sent (see
/// `ClientMiddleware`). Only this module and the apps import adapters.
///
/// Everything it builds logs to the `logger` it is given and records in the `metrics` factory
/// it is given (decision 2203; the article "Metrics and logging" lists both): by default a
/// logger that discards and the global metrics system, which records nothing until the
/// application bootstraps a backend. The metrics step is left out of the pipeline when the
/// factory is swift-metrics' no-op one.
///
/// The pipeline and the credential store are built on first use, not by `init`: a command
/// that never sends a request (`courier status`, an offline `articles list`) does not pay for
/// them. Copies of an environment share the one pipeline.
public struct CourierEnvironment: Sendable {
  /// The configuration it was built from.
  public let config: CourierConfig
  /// The request pipeline.
  public var client: APIClient { pipeline.parts.client }
  /// The session's token store.
  package var credentials: any CredentialStore { pipeline.parts.credentials }
  /// The base transport, with no decorators (for logins and probes).
  package var baseTransport: any Transport { pipeline.parts.base }
  /// The pipeline without its retry step: one attempt per call, with the token (for the
  /// base URL's origin only), the middlewares and logging. For use cases that retry on their
  /// own terms, like the tus client, which resumes with a `HEAD` instead of repeating a request.
  package var singleAttemptTransport: any Transport { pipeline.parts.singleAttempt }
  /// The path monitor: a hint for the interface and for replays, never a gate. Nobody runs it
  /// until a command needs it (`run()` in a task of the caller's).
  package let pathMonitor: any PathMonitor
  /// The monitor of links and routes alone: `pathMonitor` without the OS's facts (the netlink
  /// monitor inside it, or the same monitor). Asked once by
  /// `NetworkPaths.serverIsUnreachable()`, which needs no facts, so an offline write never
  /// loads libsystemd nor connects to the bus (decision 2600).
  package let linkMonitor: any PathMonitor
  /// The image compressor.
  package let compressor: any ImageCompressor
  /// The SHA-256 of file ranges (tus checksums, the identity of derived bytes): the CPU's SHA
  /// extensions when it has them, else the portable Swift one (decision 1303).
  package let fileHasher: any FileHasher
  private let overrides: AdapterOverrides
  /// Whether the transport is one the caller handed in (`AdapterOverrides.transport`): a test
  /// double's scripted replies are not the probe's to spend (decision 2612).
  package var transportIsInjected: Bool { overrides.transport != nil }
  private let pipeline: LazyPipeline
  /// Where everything built here logs: the pipeline's calls (`client.options.logger`), the
  /// sync engines, the path changes.
  let logger: Logger
  /// Where everything built here records its metrics, handles made once for the environment.
  let metrics: CourierMetrics
  /// The pipeline with the response cache as its first middleware (inside retry and auth, so
  /// it sees the token and a retried call asks it once per attempt): what `courier get` sends
  /// through (decision 2512). Built anew at each call; cheap.
  /// - Parameter cache: the caching middleware.
  /// - Returns: the client.
  package func client(caching cache: CachingMiddleware) -> APIClient {
    pipeline.parts.clientWithFirstStep(cache)
  }
  /// The pipeline without the auth step, for the login itself (there is no session to add or
  /// refresh yet): retried like any call, under the same retry budget, with the middlewares
  /// and logging.
  var loginClient: APIClient { pipeline.parts.loginClient }

  /// Builds the environment.
  /// - Parameters:
  ///   - config: the configuration.
  ///   - overrides: adapters to use instead of the configured ones.
  ///   - logger: where requests, retry decisions, replays and path changes are logged (levels
  ///     and metadata: the article "Metrics and logging"); by default nowhere.
  ///   - metrics: the application's metrics backend; by default the global system's factory
  ///     (no-op until the application bootstraps one).
  ///   - middlewares: the user's own steps, outermost first, run inside retry and auth.
  /// - Throws: `ConfigError` for an adapter this build cannot provide, a pin that is not
  ///   `sha256/BASE64`, a CA bundle, client certificate or key that cannot be read, or TLS
  ///   settings the URLSession transport cannot honour.
  public init(
    config: CourierConfig, overrides: AdapterOverrides = AdapterOverrides(),
    logger: Logger = .courierDiscarding, metrics: any MetricsFactory = MetricsSystem.factory,
    middlewares: [any TransportMiddleware] = []
  ) throws {
    // The transport's TLS settings, checked before anything is built: a missing CA bundle
    // would otherwise fail every request as a TLS error, and a setting the transport cannot
    // honour would be ignored (decisions 2430, 2432).
    if overrides.transport == nil, TLSSettings.anySet(config) { try TLSSettings.check(config) }
    self.config = config
    self.overrides = overrides
    self.logger = logger
    let metrics = CourierMetrics(factory: metrics)
    self.metrics = metrics
    let monitor: any PathMonitor
    var links: (any PathMonitor)?
    if let overridden = overrides.pathMonitor {
      monitor = overridden
    } else {
      switch config.pathMonitor {
      case .netlink:
        // The OS's facts merged in (decision 2601); nothing is loaded or connected until the
        // path is asked for (2600).
        let netlink = NetlinkPathMonitor()
        links = netlink
        monitor = FactsPathMonitor(
          monitor: netlink, source: DBusPathFacts.configured(config.pathFacts),
          rule: config.constrainedRule)
      case .manual, .none: monitor = ManualPathMonitor()
      }
    }
    pathMonitor = monitor
    linkMonitor = links ?? monitor
    compressor = overrides.compressor ?? VipsImageCompressor()
    if let fast = SHANIFileHasher() { fileHasher = fast } else { fileHasher = SwiftFileHasher() }
    pipeline = LazyPipeline {
      Pipeline(
        config: config, overrides: overrides, monitor: monitor, logger: logger, metrics: metrics,
        middlewares: middlewares)
    }
  }
}

/// The transports, the credential store and the client, built together on first use.
private struct Pipeline: Sendable {
  let base: any Transport
  let credentials: any CredentialStore
  let singleAttempt: any Transport
  let client: APIClient
  let loginClient: APIClient
  /// Makes the client with a step first among the middlewares (the response cache).
  let clientWithFirstStep: @Sendable (any TransportMiddleware) -> APIClient

  init(
    config: CourierConfig, overrides: AdapterOverrides, monitor: any PathMonitor,
    logger: Logger, metrics: CourierMetrics, middlewares: [any TransportMiddleware]
  ) {
    let base: any Transport
    if let transport = overrides.transport {
      base = transport
    } else {
      switch config.transport {
      #if URLSessionTransport
        case .urlsession: base = URLSessionTransport(pathStatus: { monitor.currentPath.status })
      #endif
      case .curl:
        // A concurrent replay needs as many connections as it has sends on their way.
        base = CurlTransport(
          configuration: .init(
            pathStatus: { monitor.currentPath.status }, tls: TLSSettings.curl(config),
            maxConnectionsPerHost: max(6, config.replayConcurrency)))
      case .memory: base = InMemoryTransport()
      }
    }
    self.base = base
    if let overridden = overrides.credentials {
      credentials = overridden
    } else if let token = config.token {
      credentials = StaticCredentialStore(Credentials(accessToken: token))
    } else {
      credentials = FileCredentialStore(
        file: URL(
          fileURLWithPath: FileURLPath.of("session.json", in: config.dataDirectory),
          isDirectory: false),
        warn: PrivateFiles.warnOnStandardError)
    }
    var stack: any Transport = base
    if metrics.isEnabled { stack = MetricsTransport(stack, metrics: metrics) }
    // Always there: it costs a comparison when the call's logger logs nothing.
    stack = LoggingTransport(stack)
    let logged = stack
    if !middlewares.isEmpty { stack = MiddlewareTransport(stack, middlewares: middlewares) }
    let unauthenticated = stack
    let refreshURL =
      URL(string: config.baseURL.absoluteString.trimmingSuffix("/") + "/auth/refresh")
      ?? config.baseURL
    let authenticator = RefreshTokenAuthenticator(store: credentials, refreshURL: refreshURL)
    stack = AuthTransport(
      stack, authenticator: authenticator, credentialOrigin: config.baseURL,
      allowsInsecureHTTP: config.allowsInsecureHTTP)
    singleAttempt = stack
    // The retry step logs its decisions to each call's logger and counts them and the calls.
    let executor = RetryExecutor(policy: config.retry, clock: ContinuousClock(), metrics: metrics)
    stack = RetryingTransport(stack, executor: executor)
    let options = TransportOptions(deadline: config.timeout, logger: logger)
    client = APIClient(
      baseURL: config.baseURL, transport: stack, options: options, metrics: metrics)
    loginClient = APIClient(
      baseURL: config.baseURL,
      transport: RetryingTransport(unauthenticated, executor: executor), options: options,
      metrics: metrics)
    clientWithFirstStep = { step in
      let withStep = MiddlewareTransport(logged, middlewares: [step] + middlewares)
      let authenticated = AuthTransport(
        withStep, authenticator: authenticator, credentialOrigin: config.baseURL,
        allowsInsecureHTTP: config.allowsInsecureHTTP)
      return APIClient(
        baseURL: config.baseURL, transport: RetryingTransport(authenticated, executor: executor),
        options: options, metrics: metrics)
    }
  }
}

/// Builds the pipeline once, on the first call of `parts`, whichever thread asks first.
private final class LazyPipeline: Sendable {
  private let make: @Sendable () -> Pipeline
  private let built = Mutex<Pipeline?>(nil)

  init(_ make: @escaping @Sendable () -> Pipeline) { self.make = make }

  var parts: Pipeline {
    built.withLock { built in
      if let built { return built }
      let parts = make()
      built = parts
      return parts
    }
  }
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
  package func openLocalStore(warn: @Sendable (String) -> Void = PrivateFiles.warnOnStandardError)
    throws -> any LocalStore
  {
    if let store = overrides.localStore { return store }
    let directory = config.dataDirectory
    // The paths without `URL.path`, whose first use costs a conformance scan (FileURLPath).
    try PrivateFiles.prepareDirectory(FileURLPath.of(directory), warn: warn)
    switch config.store {
    case .file:
      return try FileLocalStore(directory: FileURLPath.of("store", in: directory))
    case .memory:
      return InMemoryLocalStore()
    case .sqlite:
      // The log is kept at close: an offline write is one fdatasync (decision 1403).
      return try SQLiteLocalStore(
        path: FileURLPath.of("courier.sqlite", in: directory),
        options: .init(checkpointOnClose: false))
    }
  }
}

extension CourierEnvironment {
  /// The response cache's folder: `cache` in the data directory.
  package var responseCacheDirectory: String { FileURLPath.of("cache", in: config.dataDirectory) }

  /// Opens the response cache in the data directory (decision 2510), under the configured
  /// budget (`cache_budget_mib`).
  /// - Parameters:
  ///   - protected: the URLs pending writes reference, never evicted; none by default.
  ///   - warn: told about a damaged index started afresh.
  /// - Returns: the cache.
  /// - Throws: `StoreError` naming the file or folder.
  package func openResponseCache(
    protected: @escaping @Sendable () -> Set<String> = { [] },
    warn: @Sendable (String) -> Void = PrivateFiles.warnOnStandardError
  ) throws -> SQLiteResponseCache {
    // A missing data folder is made as every command makes it (0700); an existing one is left
    // to the commands that keep private files in it: the cache folder is private on its own.
    let data = FileURLPath.of(config.dataDirectory)
    if access(data, F_OK) != 0 { try PrivateFiles.prepareDirectory(data, warn: warn) }
    return try SQLiteResponseCache(
      directory: responseCacheDirectory, budget: config.cacheBudget, protected: protected,
      warn: warn)
  }

  /// The response cache's partition for this configuration (decision 2513): a configured token
  /// has its own (the SHA-256 of the token, so two tokens on one data folder never share a
  /// body); a signed-in session shares one, cleared at each login and logout.
  package var responseCachePartition: String {
    guard let token = config.token else { return "session" }
    return "token:" + SHA256.hex(SHA256.hash(Data(token.utf8)))
  }

  /// Empties the response cache when it exists (a login or a logout: the next identity must
  /// not read the last one's replies), but for the replies the server marked `public`, pinned
  /// or not: they are no one's private data (decision 2505). A cache that cannot be opened is
  /// left for the next open to rebuild or refuse.
  package func clearResponseCache() {
    guard access(responseCacheDirectory + "/index.sqlite", F_OK) == 0 else { return }
    try? openResponseCache(warn: { _ in }).removeAll(keeping: {
      HTTPCacheRules.outlivesIdentity($0.fields)
    })
  }
}
