import CourierCLI
import CourierLinux
import Foundation
import Testing

/// The command line as the config's top layer: `GlobalOptions` into `ConfigLoader`'s flags.
@Suite("courier's flags over the config layers")
struct ConfigFlagsTests {
  let home = ["HOME": "/home/u"]
  let file = ["/home/u/.config/courier/config.json": #"{"conflict_policy":"merge"}"#]

  func load(flags: [String: String], environment: [String: String] = [:]) throws
    -> CourierConfig
  {
    try ConfigLoader.load(flags: flags, environment: home.merging(environment) { $1 }) { path in
      file[path].map { Data($0.utf8) }
    }
  }

  @Test(
    "--conflict-policy beats the environment, which beats the file; a wrong one names its layer")
  func conflictPolicyFlag() throws {
    let flagged = try GlobalOptions.parse(["--conflict-policy", "serverWins"])
    #expect(
      try load(flags: flagged.configFlags, environment: ["COURIER_CONFLICT_POLICY": "manual"])
        .conflictPolicy == .serverWins)
    let wrong = try GlobalOptions.parse(["--conflict-policy", "newest"])
    let error = try #require(throws: ConfigError.self) {
      try load(flags: wrong.configFlags)
    }
    #expect(error.source == "command line" && error.key == "conflict_policy")
    #expect(error.message.contains("merge"))
  }

  @Test("the cache budget: 512 MiB by default; --cache-budget-mib beats the environment, in MiB")
  func cacheBudget() throws {
    #expect(try load(flags: [:]).cacheBudget == 512 * 1024 * 1024)
    #expect(
      try load(flags: [:], environment: ["COURIER_CACHE_BUDGET_MIB": "64"]).cacheBudget
        == 64 * 1024 * 1024)
    let flagged = try GlobalOptions.parse(["--cache-budget-mib", "8"])
    #expect(
      try load(flags: flagged.configFlags, environment: ["COURIER_CACHE_BUDGET_MIB": "64"])
        .cacheBudget == 8 * 1024 * 1024)
    let error = try #require(throws: ConfigError.self) {
      try load(flags: try GlobalOptions.parse(["--cache-budget-mib", "0"]).configFlags)
    }
    #expect(error.key == "cache_budget_mib" && error.message.contains("1 to 1048576"))
  }

  @Test("the TLS flags beat the environment: --ca-bundle, --pin (repeated), the client certificate")
  func tlsFlags() throws {
    let pinA = "sha256/" + Data(repeating: 1, count: 32).base64EncodedString()
    let pinB = "sha256/" + Data(repeating: 2, count: 32).base64EncodedString()
    let environment = [
      "COURIER_CA_BUNDLE": "/env/ca.pem", "COURIER_PINNED_PUBLIC_KEYS": pinA,
      "COURIER_CLIENT_CERTIFICATE": "/env/c.pem", "COURIER_CLIENT_KEY": "/env/k.pem",
    ]
    let flagged = try GlobalOptions.parse([
      "--ca-bundle", "/flag/ca.pem", "--pin", pinB, "--pin", pinA, "--client-certificate",
      "/flag/c.pem", "--client-key", "/flag/k.pem", "--allow-insecure-http",
    ])
    let config = try load(flags: flagged.configFlags, environment: environment)
    #expect(config.caBundle?.path == "/flag/ca.pem")
    #expect(config.pinnedPublicKeys == [pinB, pinA])
    #expect(config.clientCertificate?.path == "/flag/c.pem")
    #expect(config.clientKey?.path == "/flag/k.pem")
    #expect(config.allowsInsecureHTTP)
    let unflagged = try load(
      flags: try GlobalOptions.parse([]).configFlags, environment: environment)
    #expect(unflagged.caBundle?.path == "/env/ca.pem")
    #expect(unflagged.pinnedPublicKeys == [pinA])
    #expect(!unflagged.allowsInsecureHTTP)
    let wrong = try GlobalOptions.parse(["--pin", "sha256/short"])
    let error = try #require(throws: ConfigError.self) { try load(flags: wrong.configFlags) }
    #expect(error.source == "command line" && error.key == "pinned_public_keys")
  }
}
