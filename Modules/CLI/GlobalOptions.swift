import ArgumentParser
import CourierDomain
import CourierLinux

/// The options every `courier` command accepts, anywhere on the line: the root command parses
/// them wherever they stand, and each command reads the root's values (`@ParentCommand`);
/// its help names them in a closing paragraph (`CourierCommand.globalOptionsHelp`).
package struct GlobalOptions: ParsableArguments, Sendable {
  /// The transports `--transport` completes: the composition root's, in this build.
  static let transportNames = CourierConfig.TransportAdapter.allCases.map(\.rawValue)

  /// The policies `--conflict-policy` completes, spelled as the config file does.
  static let conflictPolicyNames = ConflictPolicy.allCases.map(\.rawValue)

  /// `--base-url`.
  @Option(
    name: .customLong("base-url"), parsing: .unconditional,
    help: ArgumentHelp(
      "The server (default http://127.0.0.1:8080; env COURIER_BASE_URL).", valueName: "url"))
  package var baseURL: String?

  /// `--config`.
  @Option(
    name: .customLong("config"), parsing: .unconditional,
    help: ArgumentHelp(
      "A JSON config file (default $XDG_CONFIG_HOME/courier/config.json).", valueName: "file"),
    completion: .file())
  package var configFile: String?

  /// `--data-dir`.
  @Option(
    name: .customLong("data-dir"), parsing: .unconditional,
    help: ArgumentHelp(
      "Where the session and outbox live (env COURIER_DATA_DIR).", valueName: "dir"),
    completion: .directory)
  package var dataDir: String?

  /// `--transport`: checked by the configuration (exit 78), as `COURIER_TRANSPORT` is.
  @Option(
    name: .customLong("transport"), parsing: .unconditional,
    help: ArgumentHelp(
      "curl, urlsession or memory (env COURIER_TRANSPORT).", valueName: "name"),
    completion: .list(transportNames))
  package var transport: String?

  /// `--timeout` in seconds (per attempt).
  @Option(
    name: .customLong("timeout"), parsing: .unconditional,
    help: ArgumentHelp("Deadline of one attempt, 1 to 86400 (default 30).", valueName: "seconds"))
  package var timeout: String?

  /// `--max-attempts`.
  @Option(
    name: .customLong("max-attempts"), parsing: .unconditional,
    help: ArgumentHelp(
      "Attempts in all for a transient failure, 1 to 100 (default 4).", valueName: "n"))
  package var maxAttempts: String?

  /// `--cache-budget-mib`: the response cache's budget (`cache_budget_mib`).
  @Option(
    name: .customLong("cache-budget-mib"), parsing: .unconditional,
    help: ArgumentHelp(
      "The most MiB the response cache of `courier get` keeps, 1 to 1048576 (default 512; "
        + "env COURIER_CACHE_BUDGET_MIB).",
      valueName: "mib"))
  package var cacheBudgetMiB: String?

  /// `--conflict-policy`: how version conflicts are settled (`conflict_policy`).
  @Option(
    name: .customLong("conflict-policy"), parsing: .unconditional,
    help: ArgumentHelp(
      "lastWriteWins (default), serverWins, manual or merge: how a version conflict is settled "
        + "when a write is sent (env COURIER_CONFLICT_POLICY).",
      valueName: "policy"),
    completion: .list(conflictPolicyNames))
  package var conflictPolicy: String?

  /// `--ca-bundle`: the certificate authorities to trust instead of the system's
  /// (`ca_bundle`, decision 2430).
  @Option(
    name: .customLong("ca-bundle"), parsing: .unconditional,
    help: ArgumentHelp(
      "A PEM file of the certificate authorities to trust instead of the system's, for a "
        + "server with a private CA (env COURIER_CA_BUNDLE).",
      valueName: "file"),
    completion: .file())
  package var caBundle: String?

  /// `--pin`, repeatable: the server's public key must match one (`pinned_public_keys`).
  @Option(
    name: .customLong("pin"), parsing: .unconditionalSingleValue,
    help: ArgumentHelp(
      "A pin of the server's public key, sha256/BASE64 as OkHttp spells it; repeat for "
        + "several (env COURIER_PINNED_PUBLIC_KEYS, comma-separated). Any other key is refused.",
      valueName: "pin"))
  package var pins: [String] = []

  /// `--client-certificate`: a PEM certificate for mutual TLS (`client_certificate`).
  @Option(
    name: .customLong("client-certificate"), parsing: .unconditional,
    help: ArgumentHelp(
      "A PEM client certificate for mutual TLS (env COURIER_CLIENT_CERTIFICATE).",
      valueName: "file"),
    completion: .file())
  package var clientCertificate: String?

  /// `--client-key`: the client certificate's unencrypted PEM key (`client_key`).
  @Option(
    name: .customLong("client-key"), parsing: .unconditional,
    help: ArgumentHelp(
      "The client certificate's unencrypted PEM key, when not in its file "
        + "(env COURIER_CLIENT_KEY).",
      valueName: "file"),
    completion: .file())
  package var clientKey: String?

  /// `--allow-insecure-http`: credentials may go over plain http to any host
  /// (`allow_insecure_http`, decision 2431).
  @Flag(
    name: .customLong("allow-insecure-http"),
    help: ArgumentHelp(
      "Send the session and the password over plain http:// to hosts other than loopback too "
        + "(env COURIER_ALLOW_INSECURE_HTTP=1); refused by default."))
  package var allowInsecureHTTP = false

  /// `--json`: one JSON object per line, for scripts.
  @Flag(name: .customLong("json"), help: "Print one JSON object per line, for scripts.")
  package var json = false

  /// `--verbose`: each request and retry decision on standard error.
  @Flag(
    name: [.customLong("verbose"), .customShort("v")],
    help: "Show each request and retry decision on standard error.")
  package var verbose = false

  /// `--version`: the version and the adapters of this build, whatever else the line says
  /// (`CommandRunner.start` answers it before any command runs).
  @Flag(
    name: .customLong("version"),
    help: "Print the version and the adapters of this build (with --json, as one object).")
  package var version = false

  /// `courier --version`'s line (`BuildInfo`), one JSON object with `--json`.
  package var versionText: String { json ? BuildInfo.json : BuildInfo.line }

  /// Creates the options' definitions (swift-argument-parser's; parse to get values).
  package init() {}

  /// The values that map to configuration keys.
  package var configFlags: [String: String] {
    var flags: [String: String] = [:]
    flags["base_url"] = baseURL
    flags["config"] = configFile
    flags["data_dir"] = dataDir
    flags["transport"] = transport
    flags["timeout_seconds"] = timeout
    flags["max_attempts"] = maxAttempts
    flags["conflict_policy"] = conflictPolicy
    flags["cache_budget_mib"] = cacheBudgetMiB
    flags["ca_bundle"] = caBundle
    if !pins.isEmpty { flags["pinned_public_keys"] = pins.joined(separator: ",") }
    flags["client_certificate"] = clientCertificate
    flags["client_key"] = clientKey
    if allowInsecureHTTP { flags["allow_insecure_http"] = "true" }
    return flags
  }
}
