import CourierCLI
import CourierCLITestSupport
import CourierTestSupport
import Foundation
import Testing

/// `courier` against the reference backend over HTTPS, as a user of a private deployment has
/// it (decision 2430): a certificate a private CA signed, trusted through `ca_bundle`, and a
/// server that requires a client certificate (mutual TLS). The work a user does (log in, list,
/// create, sync, upload with multipart and tus) runs over it; a missing CA, a wrong pin and a
/// missing client certificate are refused with the setting to change. Credentials over plain
/// http to a host that is not loopback are refused before anything is sent (decision 2431).
@Suite("courier over HTTPS with mutual TLS", .serialized, .sharedMutualTLSBackend)
struct HTTPSIntegrationTests {
  let pki: TestPKI
  /// Every command trusts the test CA and presents the client certificate, through the
  /// environment as a deployment would set them; a test's own settings win.
  let cli: CLIFixture

  init() throws {
    pki = try TestPKI.shared()
    cli = CLIFixture(
      "courier-https",
      environment: pki.clientEnvironment.merging(["COURIER_RETRY_BASE_DELAY_MS": "10"]) { $1 })
  }

  /// The requests the backend logged.
  func requests(_ backend: ReferenceBackend) async throws -> Int {
    try await backend.log().count
  }

  @Test("log in, create, list, sync and upload (multipart and tus) over HTTPS")
  func representativeWork() async throws {
    let backend = try await SharedBackend.fresh()
    #expect(backend.url.scheme == "https")
    let dir = try await cli.client(backend)
    defer { CLIFixture.remove(dir) }
    let add = await cli.run(
      backend, ["articles", "add", "--title", "Over TLS", "--body", "b"], dataDir: dir)
    #expect(add.code == 0, "\(add.output.stderr)")
    let offline = await cli.run(
      CLIFixture.deadURL, ["articles", "add", "--title", "Queued"], dataDir: dir)
    #expect(offline.code == 0, "\(offline.output.stderr)")
    let sync = await cli.run(backend, ["sync", "--json"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    let list = await cli.run(backend, ["articles", "list", "--json"], dataDir: dir)
    #expect(list.code == 0, "\(list.output.stderr)")
    #expect(list.lines.last?["source"] as? String == "network")
    let titles = (list.lines.last?["articles"] as? [[String: Any]])?.compactMap {
      $0["title"] as? String
    }
    #expect(Set(titles ?? []) == ["Over TLS", "Queued"])
    #expect(
      Set(try await CLIFixture.articles(backend).compactMap { $0["title"] as? String })
        == ["Over TLS", "Queued"])

    let photo = dir.appendingPathComponent("photo.jpg")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "800x600", "plasma:fractal", "-quality", "90", photo.path])
    let upload = await cli.run(
      backend, ["upload", photo.path, "--title", "Sealed", "--no-compress"], dataDir: dir)
    #expect(upload.code == 0, "\(upload.output.stderr)")
    try await CLIFixture.expectOnePhoto(backend, of: photo, title: "Sealed")

    let clip = try CLIFixture.randomFile(in: dir, bytes: 3_000_000, name: "clip.bin", seed: 2)
    let resumable = await cli.run(
      backend, ["upload", "--resumable", clip.path, "--no-compress", "--json"], dataDir: dir)
    #expect(resumable.code == 0, "\(resumable.output.stderr)")
    let uploads = try await CLIFixture.uploads(backend)
    #expect(uploads.last?["offset"] as? Int == 3_000_000)
  }

  @Test("--ca-bundle on the line trusts the CA; without one the server is untrusted: 69")
  func caBundleFlag() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { CLIFixture.remove(dir) }
    // An empty variable counts as unset: the system's trust store, which lacks the test CA.
    let noBundle = ["COURIER_CA_BUNDLE": ""]
    let flagged = await cli.run(
      backend, ["--ca-bundle", pki.ca.path, "get", "/articles"], dataDir: dir,
      environment: noBundle)
    #expect(flagged.code == 0, "\(flagged.output.stderr)")
    let before = try await requests(backend)
    let untrusted = await cli.run(
      backend, ["get", "/articles"], dataDir: dir, environment: noBundle)
    #expect(untrusted.code == 69)
    #expect(untrusted.output.stderr.contains("isn't trusted"), "\(untrusted.output.stderr)")
    #expect(untrusted.output.stderr.contains("ca_bundle"))
    let json = await cli.run(
      backend, ["--json", "get", "/articles"], dataDir: dir, environment: noBundle)
    #expect(json.lines.last?["code"] as? String == "tls_untrusted")
    #expect(json.lines.last?["attempts"] as? Int == 1)
    #expect(try await requests(backend) == before)
  }

  @Test("the server key's pin is accepted; a wrong pin exits 69 saying so, nothing is sent")
  func pins() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { CLIFixture.remove(dir) }
    let pinned = await cli.run(backend, ["--pin", pki.serverPin, "get", "/articles"], dataDir: dir)
    #expect(pinned.code == 0, "\(pinned.output.stderr)")
    let before = try await requests(backend)
    let wrong = await cli.run(
      backend, ["--pin", pki.otherPin, "articles", "add", "--title", "Not to them"], dataDir: dir)
    // The write is kept for later; the send was refused before a byte of it left.
    #expect(wrong.code == 0, "\(wrong.output.stderr)")
    #expect(wrong.output.stdout.contains("Not sent yet"), "\(wrong.output.stdout)")
    #expect(wrong.output.stdout.contains("pinned_public_keys"))
    let get = await cli.run(backend, ["--pin", pki.otherPin, "get", "/articles"], dataDir: dir)
    #expect(get.code == 69)
    #expect(get.output.stderr.contains("pinned_public_keys"), "\(get.output.stderr)")
    #expect(get.output.stderr.contains("nothing was sent"))
    #expect(try await requests(backend) == before)
    let outbox = try await cli.outbox(backend.url.absoluteString, dataDir: dir)
    #expect(outbox["pending"] as? Int == 1)
  }

  @Test("without the client certificate the server refuses the connection")
  func noClientCertificate() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { CLIFixture.remove(dir) }
    let before = try await requests(backend)
    let refused = await cli.run(
      backend, ["--max-attempts", "1", "get", "/articles"], dataDir: dir,
      environment: ["COURIER_CLIENT_CERTIFICATE": "", "COURIER_CLIENT_KEY": ""])
    // uvicorn closes the connection without a TLS alert, which libcurl reports as an empty
    // reply: a lost connection (75), not a refusal it can name (decision 2430; a server that
    // sends the alert is named, CurlTLSSettingsTests).
    #expect(refused.code == 75, "\(refused.output.stderr)")
    #expect(try await requests(backend) == before)
  }

  @Test("the built courier with --ca-bundle and client-certificate flags, as a person runs it")
  func builtBinary() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { CLIFixture.remove(dir) }
    let flags = [
      "--ca-bundle", pki.ca.path, "--client-certificate", pki.client.path, "--client-key",
      pki.clientKey.path,
    ]
    let unset = [
      "COURIER_CA_BUNDLE": "", "COURIER_CLIENT_CERTIFICATE": "", "COURIER_CLIENT_KEY": "",
    ]
    let ok = try await cli.runProcess(
      backend, flags + ["get", "/articles"], dataDir: dir, environment: unset)
    #expect(ok.succeeded, "\(ok)")
    let wrongPin = try await cli.runProcess(
      backend, flags + ["--pin", pki.otherPin, "get", "/articles"], dataDir: dir,
      environment: unset)
    #expect(wrongPin.status == 69, "\(wrongPin)")
    #expect(wrongPin.stderr.contains("pinned_public_keys"))
  }

  @Test("plain http to a host that is not loopback: login and a token are refused first, 78")
  func insecureHTTP() async throws {
    let dir = try cli.temporaryDirectory()
    defer { CLIFixture.remove(dir) }
    // TEST-NET-1 (RFC 5737): a request that went out would hang or be refused by whoever is
    // there, not be refused at once and name the setting. Nothing is sent to it: what the
    // setting lets through is InsecureHTTPNetworkTests' (a link of the test's own).
    let remote = "http://192.0.2.1:8080"
    let started = ContinuousClock.now
    let login = await cli.run(
      remote, ["login", "--username", "alice", "--password-stdin"], dataDir: dir,
      input: "secret\n")
    #expect(login.code == 78, "\(login.output.stderr)")
    #expect(login.output.stderr.contains("allow_insecure_http"))
    #expect(login.output.stderr.contains("192.0.2.1"))
    let token = await cli.run(
      remote, ["--json", "get", "/articles"], dataDir: dir, environment: ["COURIER_TOKEN": "t"])
    #expect(token.code == 78)
    #expect(token.lines.last?["code"] as? String == "insecure_http")
    #expect(ContinuousClock.now - started < .seconds(10))
  }
}
