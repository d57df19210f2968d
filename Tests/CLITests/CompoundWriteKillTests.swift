import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierTestSupport
import Foundation
import Testing

/// One compound write (decision 2520), `courier articles add --attach photo=FILE`, killed with
/// SIGKILL at each step while the reference backend holds the request of that step (`/__hold`;
/// the kill comes once `/__hold` counts it waiting, never after a fixed sleep), then `courier
/// sync`: the server stores one photo and one article naming it, the local store holds the
/// server's reference, and the private copy is gone.
@Suite("a compound write killed at each step", .serialized, .sharedBackend)
struct CompoundWriteKillTests {
  let cli = CLIFixture("courier-compound-kill")

  /// Where the kill comes, as the request the backend holds then.
  enum Step: String, CaseIterable, CustomTestStringConvertible {
    /// The record and its entry are committed; the tus probe waits before the server.
    case afterCommit
    /// The server stored the file (tus creation with its bytes); its answer waits.
    case duringFile
    /// The file is stored and proven; the record's PUT waits before the server.
    case afterFile
    /// The server applied the record's PUT; its answer waits.
    case duringRecord

    var hold: String {
      switch self {
      case .afterCommit: #"{"after":0,"when":"before","method":"OPTIONS"}"#
      case .duringFile: #"{"after":0,"when":"response","method":"POST"}"#
      case .afterFile: #"{"after":0,"when":"before","method":"PUT"}"#
      case .duringRecord: #"{"after":0,"when":"response","method":"PUT"}"#
      }
    }

    var testDescription: String { rawValue }
  }

  @Test(
    "killed at a step, then sync: one photo, one article naming it, the server's reference here",
    arguments: Step.allCases, 1...3)
  func killedThenSynced(_ step: Step, _ round: Int) async throws {
    try await killThenSync(step, round, multipart: false)
  }

  @Test(
    "the same with the file as one multipart POST (the server offers no tus)",
    arguments: Step.allCases, 1...3)
  func killedThenSyncedMultipart(_ step: Step, _ round: Int) async throws {
    try await killThenSync(step, round, multipart: true)
  }

  func killThenSync(_ step: Step, _ round: Int, multipart: Bool) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = dir.appendingPathComponent("sunset.jpg")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "320x240", "plasma:fractal", "-quality", "90", photo.path])
    if multipart {
      // The tus probe is answered 404: not a tus server, so the file goes to POST /photos.
      try await backend.call(
        "POST", "/__chaos",
        json: #"{"fail_all":true,"status":404,"path":"/uploads","method":"OPTIONS"}"#)
    }
    try await backend.call("POST", "/__hold", json: step.hold)
    let process = try cli.process(
      backend.url.absoluteString,
      ["articles", "add", "--title", "Sunset \(round)", "--attach", "photo=\(photo.path)"],
      dataDir: dir)
    try process.run()
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    let deadline = ContinuousClock.now + .seconds(120)
    while try await CLIFixture.heldRequests(backend) < 1 {
      try #require(process.isRunning, "courier ended before \(step)")
      try #require(ContinuousClock.now < deadline, "the backend never held \(step)'s request")
      try await Task.sleep(for: .milliseconds(10))
    }
    kill(process.processIdentifier, SIGKILL)
    #expect(await process.exited(within: .seconds(120)))
    try await backend.call("POST", "/__hold", json: #"{"release":true}"#)

    let sync = await cli.run(backend, ["sync"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    let photos = try await CLIFixture.photos(backend)
    #expect(photos.count == 1, "\(photos)")
    let photoID = try #require(photos.first?["id"] as? String)
    let articles = try await CLIFixture.articles(backend)
    #expect(articles.count == 1, "\(articles)")
    #expect(articles.first?["photo"] as? String == photoID)
    let local = await cli.run(
      backend, ["records", "articles", "list", "--offline", "--json"], dataDir: dir)
    let listing = try #require(
      try JSONSerialization.jsonObject(with: Data(local.output.stdout.utf8)) as? [String: Any])
    let records = try #require(listing["records"] as? [[String: Any]])
    #expect(records.count == 1)
    let fields = try #require(records.first?["fields"] as? [String: Any])
    #expect(fields["photo"] as? String == photoID, "\(records)")
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
    let posts = try await backend.log().filter {
      $0["method"] as? String == "POST" && $0["path"] as? String == "/photos"
    }
    #expect(posts.isEmpty != multipart, "\(posts)")
  }

  @Test("a refused file refuses the write: the record is not sent, both say the server's words")
  func refusedFile() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = dir.appendingPathComponent("sunset.jpg")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "320x240", "plasma:fractal", "-quality", "90", photo.path])
    // The tus server refuses every upload over 100 bytes: 413 with its words.
    try await backend.call("POST", "/__config", json: #"{"tus_max_size":100,"max_upload":100}"#)
    let add = await cli.run(
      backend, ["articles", "add", "--title", "Too big", "--attach", "photo=\(photo.path)"],
      dataDir: dir)
    #expect(add.code != 0)
    #expect(try await CLIFixture.articles(backend).isEmpty)
    #expect(try await CLIFixture.photos(backend).isEmpty)
    let puts = try await backend.log().filter { ($0["method"] as? String) == "PUT" }
    #expect(puts.isEmpty, "the record was sent: \(puts)")
    let outbox = try await cli.outbox(backend.url.absoluteString, dataDir: dir)
    #expect(outbox["rejected"] as? Int == 1, "\(outbox)")
  }

  @Test("a record refused after its file was stored keeps the photo; retry sends it with it")
  func refusedRecordKeepsPhoto() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = dir.appendingPathComponent("sunset.jpg")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "320x240", "plasma:fractal", "-quality", "90", photo.path])
    try await backend.call(
      "POST", "/__chaos", json: #"{"fail_next":1,"status":422,"path":"/articles","method":"PUT"}"#)
    let add = await cli.run(
      backend, ["articles", "add", "--title", "Kept", "--attach", "photo=\(photo.path)"],
      dataDir: dir)
    #expect(add.code != 0)
    let photos = try await CLIFixture.photos(backend)
    #expect(photos.count == 1, "the stored photo is kept")
    let photoID = try #require(photos.first?["id"] as? String)
    #expect(try await CLIFixture.articles(backend).isEmpty)
    let outbox = try await cli.outbox(backend.url.absoluteString, dataDir: dir)
    #expect(outbox["rejected"] as? Int == 1, "\(outbox)")
    let entries = try #require(outbox["entries"] as? [[String: Any]])
    let parts = try #require(entries.first?["parts"] as? [[String: Any]])
    #expect(parts.first?["state"] as? String == "stored")
    #expect(parts.first?["reference"] as? String == photoID)
    let text = await cli.run(backend, ["outbox"], dataDir: dir)
    #expect(text.output.stdout.contains("file photo stored (\(photoID))"), "\(text.output.stdout)")
    let retry = await cli.run(backend, ["outbox", "retry", "--all"], dataDir: dir)
    #expect(retry.code == 0, "\(retry.output.stderr)")
    let sync = await cli.run(backend, ["sync"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    #expect(try await CLIFixture.photos(backend).count == 1, "no second photo")
    let articles = try await CLIFixture.articles(backend)
    #expect(articles.count == 1)
    #expect(articles.first?["photo"] as? String == photoID)
  }

  @Test("edit --attach replaces the photo, edit --detach removes it")
  func editReplacesAndDetaches() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let first = dir.appendingPathComponent("first.jpg")
    let second = dir.appendingPathComponent("second.jpg")
    for file in [first, second] {
      try await Tool.run(
        "/usr/bin/convert", ["-size", "200x150", "plasma:fractal", "-quality", "90", file.path])
    }
    let add = await cli.run(
      backend, ["articles", "add", "--title", "Edited", "--attach", "photo=\(first.path)"],
      dataDir: dir)
    #expect(add.code == 0, "\(add.output.stderr)")
    let id = try #require(try await CLIFixture.articles(backend).first?["id"] as? String)
    let firstPhoto = try #require(try await CLIFixture.articles(backend).first?["photo"] as? String)
    let edit = await cli.run(
      backend, ["articles", "edit", id, "--attach", "photo=\(second.path)"], dataDir: dir)
    #expect(edit.code == 0, "\(edit.output.stderr)")
    let photos = try await CLIFixture.photos(backend).compactMap { $0["id"] as? String }
    #expect(photos.count == 2)
    let replaced = try await CLIFixture.articles(backend).first?["photo"] as? String
    #expect(replaced != nil && replaced != firstPhoto && photos.contains(replaced ?? ""))
    let detach = await cli.run(
      backend, ["articles", "edit", id, "--detach", "photo"], dataDir: dir)
    #expect(detach.code == 0, "\(detach.output.stderr)")
    let article = try #require(try await CLIFixture.articles(backend).first)
    #expect(article["photo"] == nil, "\(article)")
    #expect(article["version"] as? Int == 3)
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }

  @Test("outbox discard of a compound write removes the record, the entry and the private copy")
  func discard() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = dir.appendingPathComponent("sunset.jpg")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "320x240", "plasma:fractal", "-quality", "90", photo.path])
    // Nothing listens on port 9: the write stays in the outbox.
    _ = await cli.run(
      "http://127.0.0.1:9",
      ["articles", "add", "--title", "Later", "--attach", "photo=\(photo.path)"],
      dataDir: dir)
    #expect(CLIFixture.queuedUploads(in: dir).contains { $0.hasSuffix(".body") })
    let outbox = try await cli.outbox(backend.url.absoluteString, dataDir: dir)
    let entries = try #require(outbox["entries"] as? [[String: Any]])
    let id = try #require(entries.first?["operation_id"] as? String)
    let discard = await cli.run(backend, ["outbox", "discard", id], dataDir: dir)
    #expect(discard.code == 0, "\(discard.output.stderr) \(entries)")
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
    let sync = await cli.run(backend, ["sync"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    #expect(try await CLIFixture.articles(backend).isEmpty)
    #expect(try await CLIFixture.photos(backend).isEmpty)
  }
}
