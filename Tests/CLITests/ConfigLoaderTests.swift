import CourierComposition
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
    #expect(config.cacheDirectory.path == "/home/u/.cache/courier")
    let xdg = try load(environment: ["XDG_DATA_HOME": "/d", "XDG_CACHE_HOME": "/c"])
    #expect(xdg.dataDirectory.path == "/d/courier")
    #expect(xdg.cacheDirectory.path == "/c/courier")
  }

  @Test("layers: defaults < file < environment < flags")
  func layers() throws {
    let file =
      #"{"base_url":"http://file:1","max_attempts":2,"transport":"memory","timeout_seconds":9}"#
    let fileOnly = try load(files: ["/home/u/.config/courier/config.json": file])
    #expect(fileOnly.baseURL.absoluteString == "http://file:1")
    #expect(fileOnly.retry.maxAttempts == 2)
    #expect(fileOnly.transport == "memory")
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
          "environment variable COURIER_MAX_ATTEMPTS: \"max_attempts\": must be a positive"))
    #expect(
      message { try load(flags: ["base_url": "ftp://x"]) }
        .hasPrefix("command line: \"base_url\": must be an http or https URL"))
  }
}
