import CourierCore
import CourierDomain
import CourierTestKit
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import CourierLinux

/// What the library takes for TLS (decision 2430) and where it refuses to send credentials
/// (decision 2431), without a server: the checks happen before anything is sent.
/// A URL of a literal the test knows to be one.
private func address(_ text: String) -> URL { URL(string: text) ?? URL(fileURLWithPath: "/") }

@Suite("CourierSession: TLS settings and plain http")
struct CourierSessionTLSTests {
  /// TEST-NET-1 (RFC 5737): routed nowhere, so a request that went out would hang until its
  /// deadline or fail as unreachable rather than be refused at once.
  static let remote = address("http://192.0.2.1:8080")

  func config(_ dir: URL, baseURL: URL = remote) -> CourierConfig {
    var config = CourierConfig(environment: ["HOME": dir.path])
    config.baseURL = baseURL
    config.dataDirectory = dir.appendingPathComponent("data")
    config.pathMonitor = .manual
    config.retry.maxAttempts = 1
    config.timeout = .seconds(20)
    return config
  }

  func temporaryDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-session-tls-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
  }

  static let token =
    #"{"access_token":"t1","refresh_token":"r1","token_type":"Bearer","expires_in":3600}"#

  @Test("a login over http:// off loopback is refused before the password is sent")
  func loginRefused() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    transport.enqueue(status: 200, json: Self.token)
    let courier = try CourierSession(
      config: config(dir), overrides: AdapterOverrides(transport: transport))
    let error = try await #require(throws: CourierError.self) {
      try await courier.login(username: "alice", password: "secret")
    }
    #expect(error.code == "insecure_http")
    #expect(error.userMessage.contains("allow_insecure_http"))
    #expect(transport.requests.isEmpty)
    #expect(!courier.isLoggedIn)
  }

  @Test("over the real curl transport, the refusal comes before any connection to TEST-NET")
  func loginRefusedOverCurl() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let courier = try CourierSession(config: config(dir))
    let started = ContinuousClock.now
    let error = try await #require(throws: CourierError.self) {
      try await courier.login(username: "alice", password: "secret")
    }
    // A connection attempt to 192.0.2.1 would end as a timeout or unreachable, not this.
    #expect(error.code == "insecure_http", "\(error)")
    #expect(ContinuousClock.now - started < .seconds(5))
  }

  @Test("with allowsInsecureHTTP the login goes out over http:// off loopback")
  func loginAllowed() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    transport.enqueue(status: 200, json: Self.token)
    var config = config(dir)
    config.allowsInsecureHTTP = true
    let courier = try CourierSession(
      config: config, overrides: AdapterOverrides(transport: transport))
    try await courier.login(username: "alice", password: "secret")
    #expect(courier.isLoggedIn)
    #expect(transport.requests.map(\.path) == ["/auth/token"])
  }

  @Test("a login to loopback over http:// goes out as before")
  func loginLoopback() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    transport.enqueue(status: 200, json: Self.token)
    let courier = try CourierSession(
      config: config(dir, baseURL: address("http://localhost:9")),
      overrides: AdapterOverrides(transport: transport))
    try await courier.login(username: "alice", password: "secret")
    #expect(courier.isLoggedIn)
  }

  @Test("a fixed token (COURIER_TOKEN) is not sent over http:// off loopback")
  func staticTokenRefused() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    transport.enqueue(status: 200, json: "[]")
    var config = config(dir)
    config.token = "fixed-token"
    let environment = try CourierEnvironment(
      config: config, overrides: AdapterOverrides(transport: transport))
    let error = try await #require(throws: CourierError.self) {
      _ = try await environment.client.send(.get, "/articles")
    }
    #expect(error.code == "insecure_http")
    #expect(error.attempts == 1)
    #expect(transport.requests.isEmpty)
  }

  @Test("a missing CA bundle, certificate or key, a bad pin, a lone key: configuration errors")
  func badSettings() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let missing = dir.appendingPathComponent("missing.pem")
    let present = dir.appendingPathComponent("present.pem")
    try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: present)
    let base = config(dir, baseURL: address("https://127.0.0.1:9"))
    var rows: [(String, (inout CourierConfig) -> Void)] = [
      ("ca_bundle", { $0.caBundle = missing }),
      ("ca_bundle", { $0.caBundle = dir }),
      ("client_certificate", { $0.clientCertificate = missing }),
      (
        "client_key",
        {
          $0.clientCertificate = present; $0.clientKey = missing
        }
      ),
      ("client_key", { $0.clientKey = present }),
      ("pinned_public_keys", { $0.pinnedPublicKeys = ["sha256/short"] }),
    ]
    #if URLSessionTransport
      rows.append(
        (
          "transport",
          {
            $0.transport = .urlsession; $0.caBundle = present
          }
        ))
    #endif
    for (key, change) in rows {
      var config = base
      change(&config)
      let error = try #require(throws: ConfigError.self, "\(key)") {
        _ = try CourierEnvironment(config: config)
      }
      #expect(error.key == key, "\(error)")
    }
    var fine = base
    fine.caBundle = present
    fine.clientCertificate = present
    _ = try CourierEnvironment(config: fine)
  }
}
