import CourierCurl
import CourierDomain
import CourierLinux
import CourierPorts
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

/// The TLS settings as users need them (decision 2430), over a real HTTPS server on loopback
/// whose certificate a throwaway CA signed (`TestPKI`, `TLSTestServer`): a private CA trusted
/// through a bundle, pins of the server's key, a client certificate for mutual TLS. Every
/// refusal is a `tls` error with a code that says what to change, and is never retried: the
/// server counts one connection.
@Suite("CurlTransport: CA bundle, pins, client certificates")
struct CurlTLSSettingsTests {
  let pki: TestPKI

  init() throws { pki = try TestPKI.shared() }

  /// The server with its own certificate, or `other` (same CA, another key).
  func server(other: Bool = false, requiringClientCertificate: Bool = false) throws
    -> TLSTestServer
  {
    try TLSTestServer(
      certificate: other ? pki.other : pki.server, key: other ? pki.otherKey : pki.serverKey,
      clientCA: requiringClientCertificate ? pki.ca : nil)
  }

  /// The pipeline `courier` uses (retry, auth, logging over curl), with up to four attempts.
  func environment(_ server: TLSTestServer, _ change: (inout CourierConfig) -> Void) throws
    -> CourierEnvironment
  {
    var config = CourierConfig(environment: ["HOME": "/nonexistent"])
    config.baseURL = server.url("")
    config.transport = .curl
    config.pathMonitor = .manual
    config.retry.maxAttempts = 4
    config.retry.baseDelay = .milliseconds(1)
    config.timeout = .seconds(20)
    change(&config)
    return try CourierEnvironment(config: config)
  }

  func failure(_ work: () async throws -> Void) async -> CourierError? {
    do {
      try await work()
      return nil
    } catch {
      return error as? CourierError
    }
  }

  @Test("a private CA: refused without its bundle (untrusted, once), accepted with it")
  func privateCA() async throws {
    let server = try server()
    defer { server.stop() }
    let request = HTTPRequest(method: .get, url: server.url("/a"))
    let error = await failure { _ = try await CurlTransport().send(request) }
    #expect(error?.kind == .tls, "\(String(describing: error))")
    #expect(error?.code == "tls_untrusted")
    #expect(error?.userMessage.contains("ca_bundle") == true)
    #expect(error?.mayHaveReachedServer == false)
    #expect(server.connections == 1)
    let trusting = CurlTransport(configuration: .init(tls: .init(caBundle: pki.ca)))
    let (response, body) = try await trusting.send(request)
    #expect(response.status == 200)
    #expect(String(decoding: body.bytes, as: UTF8.self).contains(#""path": "/a""#))
  }

  @Test("through the pipeline, an untrusted certificate is tried once, never retried")
  func untrustedNotRetried() async throws {
    let server = try server()
    defer { server.stop() }
    let environment = try environment(server) { _ in }
    let error = await failure { _ = try await environment.client.send(.get, "/x") }
    #expect(error?.code == "tls_untrusted", "\(String(describing: error))")
    #expect(error?.attempts == 1)
    #expect(server.connections == 1)
  }

  @Test("the server key's pin is accepted, by itself or among others")
  func pinMatch() async throws {
    let server = try server()
    defer { server.stop() }
    for pins in [[pki.serverPin], [pki.otherPin, pki.serverPin]] {
      let environment = try environment(server) {
        $0.caBundle = pki.ca
        $0.pinnedPublicKeys = pins
      }
      let (response, _) = try await environment.client.send(.get, "/pinned")
      #expect(response.status == 200)
    }
  }

  @Test("a certificate from the trusted CA with an unpinned key: refused, once, saying why")
  func pinMismatch() async throws {
    // The other certificate verifies (same CA, same names): only the pin tells it apart, as
    // with a certificate a compromised or coerced authority issued.
    let server = try server(other: true)
    defer { server.stop() }
    let environment = try environment(server) {
      $0.caBundle = pki.ca
      $0.pinnedPublicKeys = [pki.serverPin]
      $0.token = "secret-token"
    }
    // A GET, which a transient failure would have retried.
    let error = await failure { _ = try await environment.client.send(.get, "/x") }
    #expect(error?.kind == .tls, "\(String(describing: error))")
    #expect(error?.code == "tls_pin_mismatch")
    #expect(error?.isTransient == false)
    #expect(error?.attempts == 1)
    #expect(error?.mayHaveReachedServer == false)
    #expect(error?.userMessage.contains("pinned_public_keys") == true)
    #expect(error?.underlying?.contains("CURLcode 90") == true)
    #expect(server.connections == 1)
  }

  @Test("mutual TLS: refused without a client certificate, accepted with one")
  func mutualTLS() async throws {
    let server = try server(requiringClientCertificate: true)
    defer { server.stop() }
    let without = try environment(server) { $0.caBundle = pki.ca }
    let error = await failure { _ = try await without.client.send(.get, "/m") }
    #expect(error?.kind == .tls, "\(String(describing: error))")
    #expect(error?.code == "tls_client_certificate", "\(String(describing: error))")
    #expect(error?.attempts == 1, "\(String(describing: error))")
    #expect(server.connections == 1)
    let with = try environment(server) {
      $0.caBundle = pki.ca
      $0.clientCertificate = pki.client
      $0.clientKey = pki.clientKey
    }
    let (response, body) = try await with.client.send(.get, "/m")
    #expect(response.status == 200)
    #expect(String(decoding: body.bytes, as: UTF8.self).contains(#""client": "alice""#))
  }

  @Test("a client certificate whose file holds its key too works without client_key")
  func combinedCertificateFile() async throws {
    let server = try server(requiringClientCertificate: true)
    defer { server.stop() }
    let combined = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-client-\(UUID().uuidString).pem")
    defer { try? FileManager.default.removeItem(at: combined) }
    try (try Data(contentsOf: pki.client) + Data(contentsOf: pki.clientKey)).write(to: combined)
    let environment = try environment(server) {
      $0.caBundle = pki.ca
      $0.clientCertificate = combined
    }
    let (response, _) = try await environment.client.send(.get, "/m")
    #expect(response.status == 200)
  }
}
