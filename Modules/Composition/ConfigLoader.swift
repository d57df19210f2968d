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

/// Reads configuration in layers: defaults, then a JSON file (`--config`, else
/// `$XDG_CONFIG_HOME/courier/config.json` when it exists), then the environment
/// (`COURIER_*`), then command-line flags. Pure apart from the injected file reader.
/// `CourierSession.fromEnvironment` reads the configuration with it, as `courier` does.
package enum ConfigLoader {
  /// The keys a config file, the environment and flags may set, with their environment names.
  package static let keys: [(key: String, environment: String)] = [
    ("base_url", "COURIER_BASE_URL"), ("token", "COURIER_TOKEN"),
    ("data_dir", "COURIER_DATA_DIR"),
    ("transport", "COURIER_TRANSPORT"), ("path_monitor", "COURIER_PATH_MONITOR"),
    ("store", "COURIER_STORE"), ("max_attempts", "COURIER_MAX_ATTEMPTS"),
    ("timeout_seconds", "COURIER_TIMEOUT"), ("deadline_seconds", "COURIER_DEADLINE"),
    ("retry_base_delay_ms", "COURIER_RETRY_BASE_DELAY_MS"),
    ("retry_max_delay_ms", "COURIER_RETRY_MAX_DELAY_MS"),
    ("conflict_policy", "COURIER_CONFLICT_POLICY"),
    ("resumable_uploads", "COURIER_RESUMABLE_UPLOADS"),
    ("ietf_interop_version", "COURIER_IETF_INTEROP_VERSION"),
    ("replay_concurrency", "COURIER_REPLAY_CONCURRENCY"),
    ("cache_budget_mib", "COURIER_CACHE_BUDGET_MIB"),
    ("ca_bundle", "COURIER_CA_BUNDLE"), ("pinned_public_keys", "COURIER_PINNED_PUBLIC_KEYS"),
    ("client_certificate", "COURIER_CLIENT_CERTIFICATE"), ("client_key", "COURIER_CLIENT_KEY"),
    ("allow_insecure_http", "COURIER_ALLOW_INSECURE_HTTP"),
    ("path_facts", "COURIER_PATH_FACTS"),
    ("constrained_interfaces", "COURIER_CONSTRAINED_INTERFACES"),
    ("writes_allowed_on", "COURIER_WRITES_ALLOWED_ON"),
    ("uploads_allowed_on", "COURIER_UPLOADS_ALLOWED_ON"),
    ("downloads_allowed_on", "COURIER_DOWNLOADS_ALLOWED_ON"),
    ("large_transfer_mib", "COURIER_LARGE_TRANSFER_MIB"),
    ("allow_expensive", "COURIER_ALLOW_EXPENSIVE"),
    ("portal_probe_url", "COURIER_PORTAL_PROBE_URL"),
    ("captive_portal_api_url", "COURIER_CAPTIVE_PORTAL_API_URL"),
    ("portal_recheck_seconds", "COURIER_PORTAL_RECHECK_SECONDS"),
    ("attachment_upload_url", "COURIER_ATTACHMENT_UPLOAD_URL"),
  ]

  /// The keys that name a file: a relative path in a config file is taken from the file's
  /// folder (where a CA bundle beside it is found), one in the environment or a flag from the
  /// working directory.
  static let fileKeys: Set<String> = ["ca_bundle", "client_certificate", "client_key"]

  /// The keys only a config file may set, each holding an object: `collections` (the record
  /// collections it declares, see `CourierConfig.collections`).
  package static let fileOnlyKeys = ["collections"]

  /// The accepted range of each numeric key. The bounds keep every later conversion safe
  /// (milliseconds and nanoseconds in `Int`, `Duration` arithmetic, libcurl's `long`) and
  /// refuse values that can only be typing mistakes: a per-attempt timeout of more than a
  /// day, a thousand attempts.
  package static let numericRanges: [String: ClosedRange<Int>] = [
    "max_attempts": 1...100,
    "timeout_seconds": 1...86_400,
    "deadline_seconds": 1...604_800,
    "retry_base_delay_ms": 1...3_600_000,
    "retry_max_delay_ms": 1...3_600_000,
    "replay_concurrency": 1...16,
    "cache_budget_mib": 1...1_048_576,
    "large_transfer_mib": 0...1_048_576,
    "portal_recheck_seconds": 1...86_400,
  ]

  /// The value without the blanks around it: what `trimmingCharacters(in: .whitespaces)`
  /// removes (tab and Unicode's space separators), by hand, as Foundation's goes through
  /// `NSString` and cost a 1 MiB upload with `--timeout` a million instructions.
  static func trimmingBlanks(_ value: String) -> Substring {
    func blank(_ scalar: Unicode.Scalar) -> Bool {
      scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
    }
    var scalars = Substring(value).unicodeScalars
    while let first = scalars.first, blank(first) { scalars.removeFirst() }
    while let last = scalars.last, blank(last) { scalars.removeLast() }
    return Substring(scalars)
  }

  /// A value as shown in an error: at most 40 characters, control characters escaped.
  static func shown(_ value: String) -> String {
    var prefix = ""
    prefix.unicodeScalars.append(contentsOf: value.unicodeScalars.prefix(40))
    return LogText.escaped(prefix) + (value.unicodeScalars.count > 40 ? "…" : "")
  }

  /// Loads the configuration.
  /// - Parameters:
  ///   - flags: values from the command line, by key (`base_url`...), plus `config` for the file.
  ///   - environment: the process environment.
  ///   - readFile: reads a file; returns nil when it does not exist.
  /// - Returns: the merged configuration.
  /// - Throws: `ConfigError` naming the source and the key.
  package static func load(
    flags: [String: String], environment: [String: String],
    readFile: (String) throws -> Data?
  ) throws -> CourierConfig {
    var config = CourierConfig(environment: environment)
    let explicit = flags["config"]
    let path: String? =
      explicit
      ?? {
        let home = CourierConfig.home(environment)
        let base =
          environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
          ?? home + "/.config"
        return base + "/courier/config.json"
      }()
    if let path {
      let data: Data?
      do {
        data = try readFile(path)
      } catch let problem as RegularFile.Problem {
        throw ConfigError(source: path, message: problem.why + ".")
      } catch {
        throw ConfigError(source: path, message: "can't be read (\(error)).")
      }
      if let data {
        try apply(file: data, path: path, to: &config)
        config.configFile = path
      } else if explicit != nil {
        throw ConfigError(source: path, message: "no such config file.")
      }
    }
    for (key, name) in keys {
      guard let value = environment[name] else { continue }
      // An empty variable counts as unset, but for the server: `COURIER_BASE_URL=$SERVER`
      // with SERVER unset means a server was meant, and falling back to the default one would
      // send the session's writes elsewhere, or report it unreachable (decision 2425). A
      // `--base-url` on the line still wins over it.
      if value.isEmpty, key == "base_url", flags[key] == nil {
        throw ConfigError(
          source: "environment variable \(name)", key: key,
          message: "is set but empty: give the server's URL, or unset it for the default "
            + "(\(CourierConfig(environment: [:]).baseURL.absoluteString)).")
      }
      if !value.isEmpty {
        try set(key, value, source: "environment variable \(name)", on: &config)
      }
    }
    for (key, _) in keys {
      if let value = flags[key] { try set(key, value, source: "command line", on: &config) }
    }
    // The layer a key's value came from names a conflict between keys.
    let configFile = config.configFile
    func source(of key: String) -> String {
      if flags[key] != nil { return "command line" }
      if let name = keys.first(where: { $0.key == key })?.environment,
        environment[name]?.isEmpty == false
      {
        return "environment variable \(name)"
      }
      return configFile ?? "configuration"
    }
    try TLSSettings.checkCombination(config, source: source(of:))
    return config
  }

  /// The largest config file read.
  package static let maxFileBytes = 1 << 20

  /// Reads a config file from disk: nil when nothing is at the path; only a regular file of
  /// at most `maxFileBytes` (a FIFO would block the read, `/dev/zero` would never end).
  /// - Parameter path: the path.
  /// - Returns: the contents, or nil when the file does not exist.
  /// - Throws: `RegularFile.Problem` saying what is wrong with it.
  package static func readFileIfPresent(_ path: String) throws -> Data? {
    var info = stat()
    if stat(path, &info) != 0 && errno == ENOENT { return nil }
    return try RegularFile.read(atPath: path, maxBytes: maxFileBytes)
  }

  static func apply(file data: Data, path: String, to config: inout CourierConfig) throws {
    let json: JSONValue
    do {
      json = try JSONValue(parsing: data)
    } catch {
      throw ConfigError(source: path, message: "is not valid JSON.")
    }
    guard case .object(let members) = json else {
      throw ConfigError(source: path, message: "must hold a JSON object.")
    }
    let known = Set(keys.map(\.key))
    for (key, value) in members.sorted(by: { $0.key < $1.key }) {
      if key == "collections" {
        let parsed = try CollectionConfig.parse(value, source: path)
        let articles = CollectionDescription.articles.name
        config.offlineArticlePhotos =
          parsed.first { $0.name == articles }?.offlineAttachments ?? false
        config.collections = parsed.filter { $0.name != articles }
        continue
      }
      guard known.contains(key) else {
        let names = (keys.map(\.key) + fileOnlyKeys).joined(separator: ", ")
        throw ConfigError(source: path, key: key, message: "unknown key (known: \(names)).")
      }
      var text: String
      switch value {
      case .string(let string): text = string
      case .array(let items) where key == "pinned_public_keys":
        // A list of pins: each a string, joined as the environment spells them.
        text = try items.map { item in
          guard case .string(let pin) = item else {
            throw ConfigError(source: path, key: key, message: "must list pins as strings.")
          }
          return pin
        }.joined(separator: ",")
      case .number(let number):
        // A whole number within 64 bits as its digits (`1.5e3` is 1500); a fraction or one
        // beyond (1e93, found by fuzzing) keeps its own spelling and is refused by `set` like
        // any other bad number.
        text = number.int64Value.map(String.init) ?? number.description
      case .bool(let bool): text = String(bool)
      default: throw ConfigError(source: path, key: key, message: "must be a string or a number.")
      }
      if fileKeys.contains(key), !text.isEmpty, !text.hasPrefix("/"),
        let slash = path.lastIndex(of: "/")
      {
        text = String(path[...slash]) + text
      }
      try set(key, text, source: path, on: &config)
    }
  }

  static func set(_ key: String, _ value: String, source: String, on config: inout CourierConfig)
    throws
  {
    func fail(_ message: String) -> ConfigError {
      ConfigError(source: source, key: key, message: message)
    }
    func whole(_ value: String) throws -> Int {
      guard let range = numericRanges[key] else { throw fail("unknown key.") }
      guard let number = Int(Self.trimmingBlanks(value)), range.contains(number) else {
        throw fail(
          "must be a whole number from \(range.lowerBound) to \(range.upperBound), "
            + "not “\(Self.shown(value))”.")
      }
      return number
    }
    // The one place an adapter's name is read: anything else is refused naming its source.
    // `notBuilt`: names this build knows but was built without, and why (a package trait off).
    func adapter<Adapter: RawRepresentable & CaseIterable>(
      _ value: String, notBuilt: [String: String] = [:]
    ) throws -> Adapter
    where Adapter.RawValue == String {
      guard let adapter = Adapter(rawValue: value) else {
        let names = Adapter.allCases.map(\.rawValue).joined(separator: ", ")
        if let why = notBuilt[value] {
          throw fail("“\(value)” is not in this build (\(why); known: \(names)).")
        }
        throw fail("unknown adapter “\(Self.shown(value))” (known: \(names)).")
      }
      return adapter
    }
    func bool(_ value: String) throws -> Bool {
      switch Self.trimmingBlanks(value).lowercased() {
      case "true", "1", "yes": return true
      case "false", "0", "no": return false
      default: throw fail("must be true or false, not “\(Self.shown(value))”.")
      }
    }
    // An empty path sets the file back to none (the system's trust store, no certificate).
    func file(_ value: String) -> URL? {
      value.isEmpty ? nil : URL(fileURLWithPath: value, isDirectory: false)
    }
    switch key {
    case "base_url":
      guard let url = URL(string: value), let scheme = url.scheme?.lowercased(),
        scheme == "http" || scheme == "https", url.host != nil
      else { throw fail("must be an http or https URL, not “\(Self.shown(value))”.") }
      config.baseURL = url
    case "token":
      guard value.isEmpty || HeaderFieldCheck.isValidCredential(value) else {
        // The value is a secret: never shown.
        throw fail(
          "can't be sent as a bearer token: it holds a line break, a space, a control "
            + "character or a character beyond ASCII.")
      }
      config.token = value.isEmpty ? nil : value
    case "data_dir": config.dataDirectory = URL(fileURLWithPath: value, isDirectory: true)
    case "transport":
      config.transport = try adapter(value, notBuilt: CourierConfig.TransportAdapter.notBuilt)
    case "path_monitor": config.pathMonitor = try adapter(value)
    case "store": config.store = try adapter(value)
    case "path_facts": config.pathFacts = try adapter(value)
    case "constrained_interfaces":
      switch ConstrainedRule.parse(value) {
      case .success(let rule): config.constrainedRule = rule
      case .failure(let problem): throw fail(problem.message)
      }
    case "conflict_policy":
      guard let policy = ConflictPolicy.parse(value) else {
        let names = ConflictPolicy.allCases.map(\.rawValue).joined(separator: ", ")
        throw fail("unknown conflict policy “\(Self.shown(value))” (known: \(names)).")
      }
      config.conflictPolicy = policy
    case "resumable_uploads": config.resumableUploads = try bool(value)
    case "ietf_interop_version":
      guard let version = Int(Self.trimmingBlanks(value)).flatMap(IETFInterop.init) else {
        throw fail(
          "must be an interop version of the IETF resumable uploads draft that Courier speaks, "
            + "3 to 8, not “\(Self.shown(value))”.")
      }
      config.ietfInteropVersion = version
    case "allow_insecure_http": config.allowsInsecureHTTP = try bool(value)
    case "ca_bundle": config.caBundle = file(value)
    case "client_certificate": config.clientCertificate = file(value)
    case "client_key": config.clientKey = file(value)
    case "pinned_public_keys":
      do {
        config.pinnedPublicKeys = try TLSSettings.pins(value)
      } catch {
        throw fail(error.message)
      }
    case "writes_allowed_on", "uploads_allowed_on", "downloads_allowed_on":
      guard let facts = PathPolicy.facts(value) else {
        let names = PathPolicy.Fact.allCases.map(\.rawValue).joined(separator: ", ")
        throw fail("must list path facts (\(names), or none), not “\(Self.shown(value))”.")
      }
      let work = PathPolicy.Work(rawValue: String(key.prefix { $0 != "_" })) ?? .writes
      config.pathPolicy.allowed[work] = facts
    case "large_transfer_mib":
      config.pathPolicy.largeTransferBytes = Int64(try whole(value)) * 1024 * 1024
    case "allow_expensive": config.allowsExpensiveNetworkAccess = try bool(value)
    case "portal_probe_url", "captive_portal_api_url", "attachment_upload_url":
      let trimmed = String(Self.trimmingBlanks(value))
      let off = trimmed.isEmpty || trimmed.lowercased() == "none"
      var url: URL?
      if !off {
        guard let parsed = URL(string: trimmed), let scheme = parsed.scheme?.lowercased(),
          scheme == "http" || scheme == "https", parsed.host != nil
        else { throw fail("must be an http or https URL or none, not “\(Self.shown(value))”.") }
        url = parsed
      }
      switch key {
      case "portal_probe_url":
        config.portalProbe = !off
        config.portalProbeURL = url
      case "captive_portal_api_url": config.captivePortalAPI = url
      default: config.attachmentUploadURL = url
      }
    case "portal_recheck_seconds": config.portalRecheck = .seconds(try whole(value))
    case "max_attempts": config.retry.maxAttempts = try whole(value)
    case "timeout_seconds": config.timeout = .seconds(try whole(value))
    case "deadline_seconds": config.retry.deadline = .seconds(try whole(value))
    case "retry_base_delay_ms": config.retry.baseDelay = .milliseconds(try whole(value))
    case "retry_max_delay_ms": config.retry.maxDelay = .milliseconds(try whole(value))
    case "replay_concurrency": config.replayConcurrency = try whole(value)
    case "cache_budget_mib": config.cacheBudget = try whole(value) * 1024 * 1024
    default: throw fail("unknown key.")
    }
  }
}
