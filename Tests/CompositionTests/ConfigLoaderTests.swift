import CourierLinux
import CourierSystem
import Foundation
import Testing

@Suite("ConfigLoader")
struct ConfigLoaderTests {
  let home = ["HOME": "/home/u"]

  func load(
    flags: [String: String] = [:], environment: [String: String] = [:],
    files: [String: String] = [:]
  ) throws -> CourierConfig {
    try ConfigLoader.load(flags: flags, environment: home.merging(environment) { $1 }) { path in
      files[path].map { Data($0.utf8) }
    }
  }

  @Test("defaults follow XDG")
  func defaults() throws {
    let config = try load()
    #expect(config.baseURL.absoluteString == "http://127.0.0.1:8080")
    #expect(config.dataDirectory.path == "/home/u/.local/share/courier")
    let xdg = try load(environment: ["XDG_DATA_HOME": "/d"])
    #expect(xdg.dataDirectory.path == "/d/courier")
  }

  @Test("layers: defaults < file < environment < flags")
  func layers() throws {
    let file =
      #"{"base_url":"http://file:1","max_attempts":2,"transport":"memory","timeout_seconds":9}"#
    let fileOnly = try load(files: ["/home/u/.config/courier/config.json": file])
    #expect(fileOnly.baseURL.absoluteString == "http://file:1")
    #expect(fileOnly.retry.maxAttempts == 2)
    #expect(fileOnly.transport == .memory)
    #expect(fileOnly.timeout == .seconds(9))
    let withEnv = try load(
      environment: ["COURIER_BASE_URL": "http://env:2", "COURIER_MAX_ATTEMPTS": "3"],
      files: ["/home/u/.config/courier/config.json": file])
    #expect(withEnv.baseURL.absoluteString == "http://env:2")
    #expect(withEnv.retry.maxAttempts == 3)
    let withFlags = try load(
      flags: ["base_url": "http://flag:3", "config": "/etc/c.json"],
      environment: ["COURIER_BASE_URL": "http://env:2"], files: ["/etc/c.json": file])
    #expect(withFlags.baseURL.absoluteString == "http://flag:3")
    #expect(withFlags.configFile == "/etc/c.json")
    #expect(withFlags.retry.maxAttempts == 2)
  }

  @Test("conflict_policy merge: from the file, the environment and the flags layer")
  func mergePolicy() throws {
    let file = ["/home/u/.config/courier/config.json": #"{"conflict_policy":"merge"}"#]
    #expect(try load().conflictPolicy == .lastWriteWins)
    #expect(try load(files: file).conflictPolicy == .merge)
    #expect(try load(environment: ["COURIER_CONFLICT_POLICY": "merge"]).conflictPolicy == .merge)
    #expect(
      try load(environment: ["COURIER_CONFLICT_POLICY": "manual"], files: file).conflictPolicy
        == .manual)
    #expect(try load(flags: ["conflict_policy": "MERGE"]).conflictPolicy == .merge)
    #expect(throws: ConfigError.self) {
      try load(environment: ["COURIER_CONFLICT_POLICY": "merge-ish"])
    }
  }

  @Test("a whole number too large for Int is an error, not a trap (found by scripts/fuzz)")
  func hugeWholeNumber() {
    let path = "/home/u/.config/courier/config.json"
    for file in [#"{"timeout_seconds":1e93}"#, #"{"max_attempts":-1e300}"#] {
      #expect(throws: ConfigError.self, "\(file)") { try load(files: [path: file]) }
    }
    let fine = try? load(files: [path: #"{"timeout_seconds":1e3,"max_attempts":4.0}"#])
    #expect(fine?.timeout == .seconds(1000))
    #expect(fine?.retry.maxAttempts == 4)
  }

  @Test("errors name the file or variable and the key")
  func errors() {
    func message(_ body: () throws -> CourierConfig) -> String {
      do {
        _ = try body()
        return "no error"
      } catch {
        return String(describing: error)
      }
    }
    #expect(
      message { try load(flags: ["config": "/x.json"]) } == "/x.json: no such config file.")
    #expect(
      message { try load(flags: ["config": "/x.json"], files: ["/x.json": "{nope"]) }
        == "/x.json: is not valid JSON.")
    #expect(
      message {
        try load(flags: ["config": "/x.json"], files: ["/x.json": #"{"transprt":"curl"}"#])
      }
      .hasPrefix("/x.json: \"transprt\": unknown key"))
    #expect(
      message {
        try load(
          flags: ["config": "/x.json"], files: ["/x.json": #"{"transport":"carrier-pigeon"}"#])
      }
      .hasPrefix("/x.json: \"transport\": unknown adapter “carrier-pigeon”"))
    #expect(
      message { try load(environment: ["COURIER_MAX_ATTEMPTS": "zero"]) }
        .hasPrefix(
          "environment variable COURIER_MAX_ATTEMPTS: \"max_attempts\": must be a whole number"))
    #expect(
      message { try load(flags: ["base_url": "ftp://x"]) }
        .hasPrefix("command line: \"base_url\": must be an http or https URL"))
  }

  /// Every numeric key, its environment variable, and its accepted range.
  static let numericKeys: [(key: String, environment: String, range: ClosedRange<Int>)] = [
    ("max_attempts", "COURIER_MAX_ATTEMPTS", 1...100),
    ("timeout_seconds", "COURIER_TIMEOUT", 1...86_400),
    ("deadline_seconds", "COURIER_DEADLINE", 1...604_800),
    ("retry_base_delay_ms", "COURIER_RETRY_BASE_DELAY_MS", 1...3_600_000),
    ("retry_max_delay_ms", "COURIER_RETRY_MAX_DELAY_MS", 1...3_600_000),
  ]

  /// Values no numeric key accepts, as text (environment and flags).
  static let badTexts = [
    "0", "-1", "9223372036854776", "9223372036854775807", "9223372036854775808",
    "99999999999999999999999", "1e3", "1.5", "nan", "inf", "-inf", "", " ", "0x10", "ten",
    "1\n", "1\r\nX: y",
  ]

  /// Values no numeric key accepts, as JSON numbers (a config file).
  static let badJSONNumbers = [
    "0", "-1", "1.5", "9223372036854776", "9223372036854775807", "9223372036854775808",
    "18446744073709551616", "1e300", "1e400", "-1e400", "true", "null",
  ]

  func configError(_ body: () throws -> CourierConfig) -> ConfigError? {
    do {
      _ = try body()
      return nil
    } catch let error as ConfigError {
      return error
    } catch {
      Issue.record("not a ConfigError: \(error)")
      return nil
    }
  }

  @Test("every numeric key refuses out-of-range, huge and non-numbers from flags and env")
  func numbersFromTextAreBounded() {
    for (key, environment, _) in Self.numericKeys {
      for bad in Self.badTexts {
        let fromFlag = configError { try load(flags: [key: bad]) }
        #expect(fromFlag?.source == "command line", "\(key)=\(bad.debugDescription)")
        #expect(fromFlag?.key == key, "\(key)=\(bad.debugDescription)")
        #expect(fromFlag?.message.hasPrefix("must be a whole number from 1 to ") == true)
        #expect(fromFlag?.description.contains("\n") == false)
        #expect(fromFlag?.description.contains("\r") == false)
        // An empty variable counts as unset.
        guard !bad.isEmpty else { continue }
        let fromEnvironment = configError { try load(environment: [environment: bad]) }
        #expect(
          fromEnvironment?.source == "environment variable \(environment)",
          "\(environment)=\(bad.debugDescription)")
        #expect(fromEnvironment?.key == key)
      }
    }
  }

  @Test("every numeric key refuses out-of-range, huge, non-finite and non-numbers in a file")
  func numbersFromFileAreBounded() {
    for (key, _, _) in Self.numericKeys {
      for bad in Self.badJSONNumbers {
        let error = configError {
          try load(flags: ["config": "/c.json"], files: ["/c.json": "{\"\(key)\": \(bad)}"])
        }
        #expect(error?.source == "/c.json", "\(key): \(bad)")
        #expect(error?.key == key, "\(key): \(bad)")
      }
    }
  }

  @Test("the bounds themselves are accepted, in every layer")
  func boundsAccepted() throws {
    for (key, environment, range) in Self.numericKeys {
      for value in [range.lowerBound, range.upperBound] {
        _ = try load(flags: [key: String(value)])
        _ = try load(environment: [environment: String(value)])
        _ = try load(flags: ["config": "/c.json"], files: ["/c.json": "{\"\(key)\": \(value)}"])
      }
    }
    let config = try load(flags: ["timeout_seconds": "86400", "max_attempts": "100"])
    #expect(config.timeout == .seconds(86_400))
    #expect(config.retry.maxAttempts == 100)
  }

  @Test("a token that can't be a header value is refused, and never shown")
  func tokens() throws {
    for bad in ["abc\r\ndef", "abc\n", "sec ret", "tok\u{0}", "t\u{1B}[2J", "tökén"] {
      let error = configError { try load(environment: ["COURIER_TOKEN": bad]) }
      #expect(error?.key == "token", "\(bad.debugDescription)")
      #expect(error?.source == "environment variable COURIER_TOKEN")
      #expect(error?.description.contains(bad) == false)
    }
    #expect(
      try load(environment: ["COURIER_TOKEN": "abc.DEF-123_~+/="]).token == "abc.DEF-123_~+/=")
  }

  @Test("a value with control characters is shown escaped in the error")
  func escapedValues() {
    let error = configError { try load(flags: ["transport": "curl\u{1B}[31m\r\n"]) }
    #expect(error?.description.contains("\u{1B}") == false)
    #expect(error?.description.contains("curl\\e[31m\\r\\n") == true)
  }

  @Test("a config file that is a FIFO, a device or a folder is refused without blocking")
  func configFileKinds() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cfg-\(UUID())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let fifo = dir.appendingPathComponent("fifo.json").path
    #expect(mkfifo(fifo, 0o600) == 0)
    for (path, why) in [
      (fifo, "is a pipe (FIFO), not a regular file"),
      ("/dev/zero", "is a device, not a regular file"),
      (dir.path, "is a folder, not a file"),
    ] {
      do {
        _ = try ConfigLoader.load(
          flags: ["config": path], environment: home, readFile: ConfigLoader.readFileIfPresent)
        Issue.record("\(path) was accepted")
      } catch let error as ConfigError {
        #expect(error.description == "\(path): \(why).")
      } catch {
        Issue.record("\(error)")
      }
    }
    #expect(try ConfigLoader.readFileIfPresent(dir.appendingPathComponent("none").path) == nil)
  }

  // MARK: collections

  static let file = "/home/u/.config/courier/config.json"

  @Test("replay_concurrency: 1 by default, from every layer, 1 to 16")
  func replayConcurrency() throws {
    #expect(try load().replayConcurrency == 1)
    #expect(try load(files: [Self.file: #"{"replay_concurrency": 4}"#]).replayConcurrency == 4)
    #expect(try load(environment: ["COURIER_REPLAY_CONCURRENCY": "8"]).replayConcurrency == 8)
    #expect(throws: ConfigError.self) {
      try load(environment: ["COURIER_REPLAY_CONCURRENCY": "17"])
    }
    #expect(throws: ConfigError.self) { try load(environment: ["COURIER_REPLAY_CONCURRENCY": "0"]) }
  }

  @Test("ietf_interop_version: none by default, 3 to 8 from the file and the environment")
  func ietfInteropVersion() throws {
    #expect(try load().ietfInteropVersion == nil)
    #expect(
      try load(files: [Self.file: #"{"ietf_interop_version": 3}"#]).ietfInteropVersion?.number == 3)
    #expect(
      try load(environment: ["COURIER_IETF_INTEROP_VERSION": " 6 "]).ietfInteropVersion?.number == 6
    )
    for bad in ["2", "9", "eight"] {
      let error = #expect(throws: ConfigError.self) {
        try load(environment: ["COURIER_IETF_INTEROP_VERSION": bad])
      }
      #expect(
        error?.message.contains("3 to 8, not “\(bad)”") == true, "\(String(describing: error))")
    }
  }

  @Test("COURIER_BASE_URL set but empty is refused, naming it; a flag still wins; others unset")
  func emptyBaseURL() throws {
    let error = try #require(throws: ConfigError.self) {
      try load(environment: ["COURIER_BASE_URL": ""])
    }
    #expect(error.source == "environment variable COURIER_BASE_URL")
    #expect(error.key == "base_url")
    #expect(error.message.hasPrefix("is set but empty"), "\(error)")
    let flagged = try load(
      flags: ["base_url": "http://flag:3"], environment: ["COURIER_BASE_URL": ""])
    #expect(flagged.baseURL.absoluteString == "http://flag:3")
    // The other variables: an empty one still counts as unset.
    let others = try load(environment: ["COURIER_TRANSPORT": "", "COURIER_MAX_ATTEMPTS": ""])
    #expect(others.retry.maxAttempts == CourierConfig(environment: home).retry.maxAttempts)
  }

  @Test(
    "a collection the file declares wrongly is refused, naming the file and the key path",
    arguments: badCollections)
  func badCollection(_ row: BadCollection) throws {
    let error = try #require(throws: ConfigError.self) {
      try load(files: [Self.file: #"{"collections": \#(row.json)}"#])
    }
    #expect(error.source == Self.file)
    #expect(error.key == row.key, "\(error)")
    #expect(!error.message.isEmpty)
  }

  // MARK: TLS (decisions 2430, 2431, 2432)

  /// Two pins of the right shape: `sha256/` and the base64 of 32 bytes.
  static let pinA = "sha256/" + Data(repeating: 0xA1, count: 32).base64EncodedString()
  static let pinB = "sha256/" + Data(repeating: 0xB2, count: 32).base64EncodedString()

  @Test(
    "ca_bundle, client_certificate, client_key: none by default, then file < environment < flags",
    arguments: [
      ("ca_bundle", "COURIER_CA_BUNDLE"), ("client_certificate", "COURIER_CLIENT_CERTIFICATE"),
      ("client_key", "COURIER_CLIENT_KEY"),
    ])
  func tlsFiles(_ key: String, _ variable: String) throws {
    func value(_ config: CourierConfig) -> String? {
      switch key {
      case "ca_bundle": config.caBundle?.path
      case "client_certificate": config.clientCertificate?.path
      default: config.clientKey?.path
      }
    }
    // A key needs its certificate; the certificate alone stays as it is.
    let certificate = key == "client_key" ? #","client_certificate":"/c.pem""# : ""
    let file = [Self.file: #"{"\#(key)":"/etc/file.pem"\#(certificate)}"#]
    let certificateFlag = key == "client_key" ? ["client_certificate": "/c.pem"] : [:]
    #expect(value(try load()) == nil)
    #expect(value(try load(files: file)) == "/etc/file.pem")
    #expect(value(try load(environment: [variable: "/env.pem"], files: file)) == "/env.pem")
    #expect(
      value(
        try load(
          flags: [key: "/flag.pem"].merging(certificateFlag) { $1 },
          environment: [variable: "/env.pem"], files: file)) == "/flag.pem")
    // A relative path in a file is taken from the file's folder.
    let relative = [Self.file: #"{"\#(key)":"certs/x.pem"\#(certificate)}"#]
    #expect(value(try load(files: relative)) == "/home/u/.config/courier/certs/x.pem")
    // An empty flag sets it back to none.
    #expect(
      value(try load(flags: [key: ""].merging(certificateFlag) { $1 }, files: file)) == nil)
  }

  @Test("pinned_public_keys: a list in the file, comma-separated in the environment and flags")
  func pins() throws {
    #expect(try load().pinnedPublicKeys.isEmpty)
    let file = [Self.file: #"{"pinned_public_keys":["\#(Self.pinA)","\#(Self.pinB)"]}"#]
    #expect(try load(files: file).pinnedPublicKeys == [Self.pinA, Self.pinB])
    let single = [Self.file: #"{"pinned_public_keys":"\#(Self.pinB)"}"#]
    #expect(try load(files: single).pinnedPublicKeys == [Self.pinB])
    let environment = ["COURIER_PINNED_PUBLIC_KEYS": "\(Self.pinB), \(Self.pinA)"]
    #expect(
      try load(environment: environment, files: file).pinnedPublicKeys == [Self.pinB, Self.pinA])
    #expect(
      try load(
        flags: ["pinned_public_keys": Self.pinA], environment: environment, files: file
      ).pinnedPublicKeys == [Self.pinA])
    // curl's spelling, sha256//BASE64, is taken and spelled as OkHttp does.
    let curl = Self.pinA.replacingOccurrences(of: "sha256/", with: "sha256//")
    #expect(try load(flags: ["pinned_public_keys": curl]).pinnedPublicKeys == [Self.pinA])
  }

  /// Digests whose base64 begins with "/" (0xFC…) or "+" (0xF8…): a test PKI's random key once
  /// had one, and a leading "/" was taken for curl's `sha256//`.
  @Test(
    "a pin whose base64 begins with / or + is kept as it is; curl's spelling of it too",
    arguments: [Data([0xFC]) + Data(repeating: 7, count: 31), Data([0xF8]) + Data(count: 31)])
  func pinStartingWithSlash(_ digest: Data) throws {
    let pin = "sha256/" + digest.base64EncodedString()
    #expect(try load(flags: ["pinned_public_keys": pin]).pinnedPublicKeys == [pin])
    let curl = "sha256//" + digest.base64EncodedString()
    #expect(try load(flags: ["pinned_public_keys": curl]).pinnedPublicKeys == [pin])
  }

  @Test(
    "a pin that is not sha256/ and the base64 of 32 bytes is refused, naming its layer",
    arguments: [
      "sha1/AAAA", "sha256/", "sha256/not base64!",
      "sha256/" + Data(count: 20).base64EncodedString(),
      "AQIDBA==",
    ])
  func badPin(_ pin: String) throws {
    let error = try #require(throws: ConfigError.self) {
      try load(environment: ["COURIER_PINNED_PUBLIC_KEYS": "\(Self.pinA),\(pin)"])
    }
    #expect(error.source == "environment variable COURIER_PINNED_PUBLIC_KEYS")
    #expect(error.key == "pinned_public_keys")
    #expect(error.message.contains("sha256/"), "\(error)")
    let fromFile = try #require(throws: ConfigError.self) {
      try load(files: [Self.file: #"{"pinned_public_keys":[1]}"#])
    }
    #expect(fromFile.key == "pinned_public_keys")
  }

  @Test("allow_insecure_http: off by default; from the file, the environment and the flags")
  func allowInsecureHTTP() throws {
    #expect(try load().allowsInsecureHTTP == false)
    let file = [Self.file: #"{"allow_insecure_http":true}"#]
    #expect(try load(files: file).allowsInsecureHTTP)
    #expect(
      try load(environment: ["COURIER_ALLOW_INSECURE_HTTP": "0"], files: file).allowsInsecureHTTP
        == false)
    #expect(try load(environment: ["COURIER_ALLOW_INSECURE_HTTP": "1"]).allowsInsecureHTTP)
    #expect(
      try load(
        flags: ["allow_insecure_http": "true"], environment: ["COURIER_ALLOW_INSECURE_HTTP": "0"]
      ).allowsInsecureHTTP)
    let error = try #require(throws: ConfigError.self) {
      try load(environment: ["COURIER_ALLOW_INSECURE_HTTP": "maybe"])
    }
    #expect(error.key == "allow_insecure_http")
  }

  @Test("a client key without its certificate is refused, naming the key's layer")
  func keyWithoutCertificate() throws {
    let error = try #require(throws: ConfigError.self) {
      try load(environment: ["COURIER_CLIENT_KEY": "/k.pem"])
    }
    #expect(error.key == "client_key")
    #expect(error.source == "environment variable COURIER_CLIENT_KEY")
    #expect(error.message.contains("client_certificate"))
  }

  @Test("the urlsession transport with a CA bundle, pins or a client certificate is refused")
  func urlSessionRefusesTLSSettings() throws {
    let settings: [[String: String]] = [
      ["COURIER_CA_BUNDLE": "/ca.pem"], ["COURIER_PINNED_PUBLIC_KEYS": Self.pinA],
      ["COURIER_CLIENT_CERTIFICATE": "/c.pem"],
    ]
    for setting in settings {
      let error = try #require(throws: ConfigError.self) {
        try load(flags: ["transport": "urlsession"], environment: setting)
      }
      #expect(error.key == "transport", "\(setting)")
      #expect(error.source == "command line")
      #expect(error.message.contains("curl"), "\(error)")
    }
    // Without them, urlsession is fine; with them, curl is.
    #expect(try load(flags: ["transport": "urlsession"]).transport.rawValue == "urlsession")
    #expect(try load(environment: settings[0]).transport == .curl)
  }
}
