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

/// Everything the composition root needs to pick and set up adapters.
public struct CourierConfig: Sendable, Equatable {
  /// The server's base URL.
  public var baseURL: URL = URL(string: "http://127.0.0.1:8080") ?? URL(fileURLWithPath: "/")
  /// A fixed bearer token (instead of a session from `courier login`).
  package var token: String?
  /// Where user data lives (session, outbox, local edits): never purged.
  public var dataDirectory: URL
  /// The transport adapter.
  package var transport: TransportAdapter = CourierConfig.defaultTransport
  /// The path monitor adapter.
  package var pathMonitor: PathMonitorAdapter = CourierConfig.defaultPathMonitor
  /// Where the netlink monitor's paths get metered links and captive portals from
  /// (`path_facts`, decision 2602).
  package var pathFacts: PathFactsSetting = .auto
  /// Which links count as constrained (`constrained_interfaces`: names, `prefix*`, link kinds,
  /// NetworkManager connection types); empty: none (Linux cannot tell).
  package var constrainedRule = ConstrainedRule()
  /// The local store adapter.
  package var store: StoreAdapter = CourierConfig.defaultStore
  /// The retry policy.
  public var retry = RetryPolicy()
  /// The per-attempt deadline.
  public var timeout: Duration = .seconds(30)
  /// Which file the config was read from, if any.
  package var configFile: String?
  /// How the sync engine settles version conflicts (`conflict_policy`).
  public var conflictPolicy: ConflictPolicy = .lastWriteWins
  /// Whether `courier upload` uses tus (resumable) without `--resumable`
  /// (`resumable_uploads`).
  package var resumableUploads = false
  /// The IETF resumable uploads draft's interop version uploads speak, 3 to 8
  /// (`ietf_interop_version`, decision 2708): the only one tried. nil: 8, and the highest
  /// version both speak when a server refuses it.
  package var ietfInteropVersion: IETFInterop?
  /// How many outbox entries of different records a replay sends at once
  /// (`replay_concurrency`, 1 to 16): 1 (the default) keeps the outbox's global order; more
  /// keeps each record's order only, over as many keep-alive connections (decision 1204).
  package var replayConcurrency = 1
  /// The most bytes the response cache's bodies may take together (`cache_budget_mib`, in
  /// MiB; default 512 MiB): past it, least-recently-used replies are evicted, never pinned ones
  /// nor files pending writes reference.
  public var cacheBudget = 512 * 1024 * 1024
  /// A PEM file of the certificate authorities to trust instead of the system's trust store
  /// (`ca_bundle`), for a server whose certificate a private authority signed. Certificates
  /// are always verified; nil trusts the system's store.
  public var caBundle: URL?
  /// Pins of the server's public key (`pinned_public_keys`), each `sha256/BASE64`: the
  /// SHA-256 of its DER SubjectPublicKeyInfo, as OkHttp's `CertificatePinner` spells it
  /// (`openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256
  /// -binary | base64`). When any is given, a server whose key matches none is refused
  /// before anything is sent, and never retried; the certificate is verified as well.
  public var pinnedPublicKeys: [String] = []
  /// A PEM client certificate for mutual TLS (`client_certificate`).
  public var clientCertificate: URL?
  /// The client certificate's unencrypted PEM key (`client_key`); nil when the certificate's
  /// file holds it.
  public var clientKey: URL?
  /// Whether a token, refresh token or password may go over plain `http://` to a host that
  /// is not loopback (`allow_insecure_http`). Off: such a request is refused before anything
  /// is sent (`insecure_http`); loopback (127.0.0.0/8, `::1`, `localhost`) is always allowed.
  public var allowsInsecureHTTP = false
  /// Another server's tus creation URL that attachment fields' files go to
  /// (`attachment_upload_url`, decision 2515); nil (the default): the base URL's `/uploads`
  /// when it speaks tus, else `/photos`. A record then names its file by the upload's URL,
  /// which the server must be willing to check.
  package var attachmentUploadURL: URL?
  /// The record collections the config file declares (`collections`), besides the built-in
  /// articles: each gets the same reads, outbox and conflicts (`Collections.records(_:warn:)`,
  /// `courier records NAME …`).
  package var collections: [CollectionDescription] = []
  /// Whether the built-in articles' photos are downloaded after a sync or a refresh and kept
  /// for offline reading (`collections.articles.offline_attachments`, decision 2507).
  package var offlineArticlePhotos = false
  /// What kind of work may use which path (decision 2610): `writes_allowed_on`,
  /// `uploads_allowed_on`, `downloads_allowed_on` (each a list of `expensive`, `constrained`,
  /// `captive_portal`) and `large_transfer_mib`.
  package var pathPolicy = PathPolicy.standard
  /// Whether queued uploads and large downloads may use an expensive (metered) path although
  /// the path policy holds them back there (`allow_expensive`, `--allow-expensive`), as
  /// URLSession's `allowsExpensiveNetworkAccess`. Record writes and requests run directly are
  /// never held back by a metered path.
  public var allowsExpensiveNetworkAccess = false
  /// The URL Courier's captive-portal probe asks (`portal_probe_url`, decision 2612); nil for
  /// the server's `GET /health`, which must answer 200 `{"ok": true}`; another URL may answer
  /// 204 instead. Off when `portalProbe` is false (`portal_probe_url` set to `none`).
  package var portalProbeURL: URL?
  /// Whether the captive-portal probe runs.
  package var portalProbe = true
  /// An RFC 8908 captive-portal API URL (`captive_portal_api_url`), asked before the probe.
  package var captivePortalAPI: URL?
  /// How often the probe asks again while a portal holds the path
  /// (`portal_recheck_seconds`).
  package var portalRecheck: Duration = .seconds(30)

  /// The user's home: `HOME` when set, else the password database's entry, else `/` (what
  /// Foundation's `NSHomeDirectory()` gives).
  /// - Parameter environment: the process environment.
  /// - Returns: the home directory's path.
  package static func home(_ environment: [String: String]) -> String {
    if let home = environment["HOME"], !home.isEmpty { return home }
    return PasswordDatabase.home(ofUID: getuid()) ?? "/"
  }

  /// Creates the defaults for an environment.
  /// - Parameter environment: the process environment (for `HOME` and the XDG variables).
  public init(environment: [String: String]) {
    let home = Self.home(environment)
    func xdg(_ name: String, _ fallback: String) -> URL {
      let base = environment[name].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (home + fallback)
      // Joined as a String: `appendingPathComponent` is a conformance scan on its first use
      // (FileURLPath), and every command makes these defaults.
      return URL(
        fileURLWithPath: base.hasSuffix("/") ? base + "courier" : base + "/courier",
        isDirectory: true)
    }
    dataDirectory = xdg("XDG_DATA_HOME", "/.local/share")
  }

  /// libcurl on Linux, where URLSession uploads at a tenth of line rate
  /// (Docs/decisions/0501); URLSession elsewhere.
  package static var defaultTransport: TransportAdapter {
    #if os(Linux) || !URLSessionTransport
      return .curl
    #else
      return .urlsession
    #endif
  }

  /// rtnetlink, the one path monitor that watches the real network.
  package static var defaultPathMonitor: PathMonitorAdapter { .netlink }

  /// SQLite: one durable transaction per write (Docs/decisions/0402).
  package static var defaultStore: StoreAdapter { .sqlite }

  /// Transport adapters, by the name used in config files, `COURIER_TRANSPORT` and flags.
  package enum TransportAdapter: String, Sendable, CaseIterable {
    /// libcurl (`CourierCurl`): the default on Linux.
    case curl
    #if URLSessionTransport
      /// Foundation's URLSession (`CourierURLSession`), in a build with the package trait
      /// `URLSessionTransport` (the default).
      case urlsession
    #endif
    /// An in-process server emulation (`CourierMemory`), for demos and tests.
    case memory

    /// The transports this build was built without, by name, and why (decision 1414).
    static var notBuilt: [String: String] {
      #if URLSessionTransport
        [:]
      #else
        ["urlsession": "built without the package trait URLSessionTransport"]
      #endif
    }
  }

  /// Path monitor adapters, by name.
  package enum PathMonitorAdapter: String, Sendable, CaseIterable {
    /// rtnetlink (`CourierNetlink`).
    case netlink
    /// A monitor driven by hand; the path stays unknown unless someone sends one.
    case manual
    /// No monitoring: the same as `manual`, spelled for configuration files.
    case none
  }

  /// The OS's network service the path's facts come from, by the name `path_facts` takes.
  package enum PathFactsSetting: String, Sendable, CaseIterable {
    /// NetworkManager when it is on the system bus, else systemd-networkd, else netlink alone.
    case auto
    /// NetworkManager only.
    case networkmanager
    /// systemd-networkd only.
    case networkd
    /// Netlink alone: the system bus is never opened.
    case none
  }

  /// Local store adapters, by name.
  package enum StoreAdapter: String, Sendable, CaseIterable {
    /// SQLite in the data folder (`courier.sqlite`).
    case sqlite
    /// An append-only log and snapshots in the data folder (`store/`).
    case file
    /// In memory: nothing survives the process.
    case memory
  }
}
