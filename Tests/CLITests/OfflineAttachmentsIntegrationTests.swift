import CourierCLITestSupport
import CourierLinux
import CourierSQLite
import CourierTestSupport
import Foundation
import Testing

/// A collection that asks for its records' files offline (`"offline_attachments": true`,
/// decision 2507): real `courier` processes against the reference backend. After a refresh the
/// photos the articles name are in the response cache; a second refresh sends no request for a
/// kept one; a named photo is never evicted while an unnamed one is.
@Suite("Records' attachments kept offline", .serialized, .sharedBackend)
struct OfflineAttachmentsIntegrationTests {
  let cli = CLIFixture(
    "courier-offline-attachments",
    config: #"{"collections": {"articles": {"offline_attachments": true}}}"#)

  func place(_ backend: ReferenceBackend, id: String, size: Int) async throws -> String {
    let (status, body) = try await backend.call(
      "POST", "/__photos", json: #"{"id":"\#(id)","size":\#(size),"owner":"alice"}"#)
    try #require(status == 201, "\(String(decoding: body, as: UTF8.self))")
    let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    return try #require(object["sha256"] as? String)
  }

  func served(_ backend: ReferenceBackend, id: String) async throws -> [[String: Any]] {
    let (_, body) = try await backend.call("GET", "/__photos/served")
    let list = try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
    return list.filter { $0["id"] as? String == id }
  }

  func article(_ backend: ReferenceBackend, id: String, photo: String) async throws {
    let token = try await CLIFixture.token(backend)
    let created = try await backend.call(
      "POST", "/articles",
      json: #"{"id":"\#(id)","title":"with \#(photo)","body":"","photo":"\#(photo)"}"#,
      headers: ["Authorization": "Bearer \(token)"])
    try #require(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
  }

  func cached(_ dir: URL) throws -> [String: String] {
    let cache = try SQLiteResponseCache(
      directory: dir.appendingPathComponent("cache").path, budget: 1 << 30)
    var files: [String: String] = [:]
    for entry in try cache.allEntries() {
      files[entry.url] = try cache.bodyPath(of: entry)
    }
    return files
  }

  @Test("after a refresh the articles' photos are kept; again: no request for a kept one")
  func keptAfterRefresh() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let digest = try await place(backend, id: "sunset", size: 300_000)
    try await article(backend, id: "a-sunset", photo: "sunset")
    let list = try await cli.runProcess(backend, ["articles", "list"], dataDir: dir)
    #expect(list.succeeded, "\(list)")
    let url = backend.url.absoluteString + "/photos/sunset"
    let kept = try cached(dir)
    let file = try #require(kept[url], "\(kept)")
    #expect(try CLIFixture.sha256(URL(fileURLWithPath: file)) == digest)
    #expect(
      try await served(backend, id: "sunset").compactMap { $0["method"] as? String } == [
        "HEAD", "GET",
      ])
    let again = try await cli.runProcess(backend, ["articles", "list"], dataDir: dir)
    #expect(again.succeeded, "\(again)")
    #expect(try await served(backend, id: "sunset").count == 2)
    // A sync downloads nothing kept either.
    let sync = try await cli.runProcess(backend, ["sync"], dataDir: dir)
    #expect(sync.succeeded, "\(sync)")
    #expect(try await served(backend, id: "sunset").count == 2)
  }

  @Test("a photo a stored article names is never evicted; an unnamed one goes instead")
  func namedPhotoProtected() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 400 * 1024
    for id in ["named", "x", "y"] { _ = try await place(backend, id: id, size: size) }
    try await article(backend, id: "a-named", photo: "named")
    let budget = ["--cache-budget-mib", "1"]
    let list = try await cli.runProcess(backend, ["articles", "list"] + budget, dataDir: dir)
    #expect(list.succeeded, "\(list)")
    let named = backend.url.absoluteString + "/photos/named"
    #expect(try cached(dir)[named] != nil)
    for id in ["x", "y"] {
      let run = try await cli.runProcess(
        backend, ["download", "/photos/\(id)"] + budget, dataDir: dir)
      #expect(run.succeeded, "\(run)")
    }
    // `named` is the least recently used, but a stored article names it: x goes.
    let kept = try cached(dir)
    #expect(kept[named] != nil, "\(kept)")
    #expect(kept[backend.url.absoluteString + "/photos/x"] == nil, "\(kept)")
    #expect(kept[backend.url.absoluteString + "/photos/y"] != nil, "\(kept)")
  }

  @Test("sync --watch keeps the photo of a write it delivers (decision 2516)")
  func watchKeepsDeliveredPhoto() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = dir.appendingPathComponent("sunset.jpg")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "320x240", "plasma:fractal", "-quality", "90", photo.path])
    let output = dir.appendingPathComponent("watch.jsonl")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    let watch = try cli.process(
      backend.url.absoluteString, ["sync", "--watch", "--json"], dataDir: dir)
    watch.standardOutput = try FileHandle(forWritingTo: output)
    try watch.run()
    defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
    // Its first state: it holds the data folder's sync lock, so the add below leaves its write
    // to the watch (and downloads nothing itself).
    let deadline = ContinuousClock.now + .seconds(120)
    while ((try? String(contentsOf: output, encoding: .utf8)) ?? "").isEmpty {
      try #require(watch.isRunning && ContinuousClock.now < deadline, "the watch never started")
      try await Task.sleep(for: .milliseconds(20))
    }
    let add = await cli.run(
      backend, ["articles", "add", "--title", "Watched", "--attach", "photo=\(photo.path)"],
      dataDir: dir)
    #expect(add.code == 0, "\(add.output.stderr)")
    var url: String?
    while try url == nil || cached(dir)[url ?? ""] == nil {
      let kept = try cached(dir)
      try #require(ContinuousClock.now < deadline, "the watch kept no photo: \(kept)")
      try await Task.sleep(for: .milliseconds(50))
      if url == nil, let id = try await CLIFixture.articles(backend).first?["photo"] as? String {
        url = backend.url.absoluteString + "/photos/" + id
      }
    }
    let stored = try #require(try await CLIFixture.photos(backend).first?["sha256"] as? String)
    let file = try #require(try cached(dir)[url ?? ""])
    #expect(try CLIFixture.sha256(URL(fileURLWithPath: file)) == stored)
    kill(watch.processIdentifier, SIGTERM)
    #expect(await watch.exited(within: .seconds(60)))
  }
}
