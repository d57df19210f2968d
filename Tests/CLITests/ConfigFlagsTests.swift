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
}
