import CourierDomain
import CourierLinux
import Foundation
import Testing

/// The path policy's and the captive-portal probe's configuration keys (decisions 2610, 2612),
/// through the layers: defaults, file, environment, flags.
@Suite("Path policy configuration")
struct PathPolicyConfigTests {
  let home = ["HOME": "/home/u"]
  let file = "/home/u/.config/courier/config.json"

  func load(
    flags: [String: String] = [:], environment: [String: String] = [:], contents: String? = nil
  ) throws -> CourierConfig {
    try ConfigLoader.load(flags: flags, environment: home.merging(environment) { $1 }) { path in
      path == file ? contents.map { Data($0.utf8) } : nil
    }
  }

  @Test("defaults: the issue's table, the probe on the server's /health, no portal API")
  func defaults() throws {
    let config = try load()
    #expect(config.pathPolicy == .standard)
    #expect(config.pathPolicy.largeTransferBytes == 1 << 20)
    #expect(!config.allowsExpensiveNetworkAccess)
    #expect(config.portalProbe && config.portalProbeURL == nil)
    #expect(config.captivePortalAPI == nil)
    #expect(config.portalRecheck == .seconds(30))
  }

  @Test("each key from the file, then the environment over it, then a flag over both")
  func layers() throws {
    let contents = """
      {"uploads_allowed_on": "expensive", "writes_allowed_on": ["ignored"],
       "large_transfer_mib": 4}
      """
    // A list is refused: the keys take the words as one string.
    #expect(throws: ConfigError.self) { try load(contents: contents) }
    let fromFile = try load(
      contents: """
        {"uploads_allowed_on": "expensive", "downloads_allowed_on": "expensive, constrained",
         "writes_allowed_on": "expensive constrained captive_portal", "large_transfer_mib": 4,
         "allow_expensive": true, "portal_probe_url": "http://probe.example/gen204",
         "captive_portal_api_url": "https://portal.example/api", "portal_recheck_seconds": 2}
        """)
    #expect(fromFile.pathPolicy.allowed[.uploads] == [.expensive])
    #expect(fromFile.pathPolicy.allowed[.downloads] == [.expensive, .constrained])
    #expect(fromFile.pathPolicy.allowed[.writes] == Set(PathPolicy.Fact.allCases))
    #expect(fromFile.pathPolicy.largeTransferBytes == 4 << 20)
    #expect(fromFile.allowsExpensiveNetworkAccess)
    #expect(fromFile.portalProbeURL?.absoluteString == "http://probe.example/gen204")
    #expect(fromFile.captivePortalAPI?.absoluteString == "https://portal.example/api")
    #expect(fromFile.portalRecheck == .seconds(2))
    let environment = try load(
      environment: [
        "COURIER_UPLOADS_ALLOWED_ON": "none", "COURIER_PORTAL_PROBE_URL": "none",
        "COURIER_ALLOW_EXPENSIVE": "0",
      ], contents: #"{"uploads_allowed_on": "expensive", "allow_expensive": true}"#)
    #expect(environment.pathPolicy.allowed[.uploads] == [])
    #expect(!environment.portalProbe)
    #expect(!environment.allowsExpensiveNetworkAccess)
    let flag = try load(
      flags: ["allow_expensive": "true"], environment: ["COURIER_ALLOW_EXPENSIVE": "no"])
    #expect(flag.allowsExpensiveNetworkAccess)
  }

  @Test("a bad value names its layer and key and what is accepted")
  func errors() throws {
    let fact = try #require(throws: ConfigError.self) {
      try load(environment: ["COURIER_UPLOADS_ALLOWED_ON": "metered"])
    }
    #expect(fact.key == "uploads_allowed_on")
    #expect(fact.source == "environment variable COURIER_UPLOADS_ALLOWED_ON")
    #expect(fact.message.contains("expensive") && fact.message.contains("captive_portal"))
    let url = try #require(throws: ConfigError.self) {
      try load(flags: ["portal_probe_url": "ftp://x/"])
    }
    #expect(url.key == "portal_probe_url")
    #expect(url.message.contains("none"))
    let size = try #require(throws: ConfigError.self) {
      try load(contents: #"{"large_transfer_mib": -1}"#)
    }
    #expect(size.key == "large_transfer_mib")
  }
}
