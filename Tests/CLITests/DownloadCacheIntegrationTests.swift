import CourierCLITestSupport
import CourierLinux
import CourierSQLite
import CourierTestSupport
import Foundation
import Testing

/// `courier download` without `--output` keeps the file in the response cache (decision
/// 2504): real `courier` processes against the reference backend's `GET /photos/{id}`, whose
/// `/__photos/served` counts the body bytes it sent.
@Suite("courier download into the response cache", .serialized, .sharedBackend)
struct DownloadCacheIntegrationTests {
  let cli = CLIFixture("courier-download-cache", environment: ["COURIER_RETRY_BASE_DELAY_MS": "10"])

  @discardableResult
  func place(_ backend: ReferenceBackend, id: String, size: Int, seed: Int = 1) async throws
    -> String
  {
    let (status, body) = try await backend.call(
      "POST", "/__photos", json: #"{"id":"\#(id)","size":\#(size),"seed":\#(seed)}"#)
    try #require(status == 201, "\(String(decoding: body, as: UTF8.self))")
    let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    return try #require(object["sha256"] as? String)
  }

  func served(_ backend: ReferenceBackend, id: String) async throws -> [[String: Any]] {
    let (_, body) = try await backend.call("GET", "/__photos/served")
    let list = try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
    return list.filter { $0["id"] as? String == id }
  }

  /// Runs `courier --json download ARGS` as a process; returns its last JSON line.
  func download(
    _ backend: ReferenceBackend, _ arguments: [String], dir: URL,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws -> [String: Any] {
    let run = try await cli.runProcess(backend, ["--json", "download"] + arguments, dataDir: dir)
    try #require(run.succeeded, "\(run)", sourceLocation: sourceLocation)
    let last = try #require(run.stdout.split(separator: "\n").last, sourceLocation: sourceLocation)
    return try #require(
      try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any],
      sourceLocation: sourceLocation)
  }

  func exists(_ path: Any?) -> Bool {
    (path as? String).map { FileManager.default.fileExists(atPath: $0) } ?? false
  }

  @Test("admitted to the cache; again: a 304 that costs no body; a new version: downloaded afresh")
  func admittedAndRevalidated() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 1024 * 1024 + 3
    let digest = try await place(backend, id: "kept", size: size)
    let first = try await download(backend, ["/photos/kept"], dir: dir)
    let file = try #require(first["file"] as? String)
    #expect(file.hasPrefix(dir.appendingPathComponent("cache").path), "\(file)")
    #expect(try CLIFixture.sha256(URL(fileURLWithPath: file)) == digest)
    #expect(
      !FileManager.default.fileExists(atPath: dir.appendingPathComponent("downloads/kept").path))

    let second = try await download(backend, ["/photos/kept"], dir: dir)
    #expect(second["file"] as? String == file)
    #expect(second["cache"] as? String == "revalidated")
    #expect(second["received"] as? Int == 0)
    let log = try await served(backend, id: "kept")
    // HEAD and GET of the first run, then one conditional HEAD answered 304.
    #expect(log.compactMap { $0["method"] as? String } == ["HEAD", "GET", "HEAD"], "\(log)")
    #expect(log.last?["status"] as? Int == 304)
    let bytes = log.reduce(0) { $0 + ($1["bytes"] as? Int ?? 0) }
    #expect(bytes == size, "\(bytes) body bytes served for one \(size)-byte file")

    let newer = try await place(backend, id: "kept", size: size, seed: 2)
    let third = try await download(backend, ["/photos/kept"], dir: dir)
    let renewed = try #require(third["file"] as? String)
    #expect(third["cache"] == nil)
    #expect(try CLIFixture.sha256(URL(fileURLWithPath: renewed)) == newer)
    #expect(!FileManager.default.fileExists(atPath: file) || renewed == file)
  }

  @Test("offline after the backend stops: the cached file, said how old, exit 0")
  func offline() async throws {
    let backend = try await ReferenceBackend()
    var stopped = false
    defer { if !stopped { backend.stop() } }
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let digest = try await place(backend, id: "away", size: 200_000)
    let online = try await download(backend, ["/photos/away"], dir: dir)
    backend.stop()
    stopped = true
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline, (try? await backend.call("GET", "/health")) != nil {
      try await Task.sleep(for: .milliseconds(20))
    }
    let text = try await cli.runProcess(backend, ["download", "/photos/away"], dataDir: dir)
    #expect(text.succeeded, "\(text)")
    #expect(
      text.stderr.contains(/Offline: the copy from (just now|\d+ seconds? ago)\./), "\(text)")
    let file = try #require(online["file"] as? String)
    #expect(text.stdout.hasPrefix(file), "\(text.stdout)")
    let json = try await download(backend, ["/photos/away"], dir: dir)
    #expect(json["cache"] as? String == "stale")
    #expect((json["age_seconds"] as? Int).map { $0 >= 0 } == true)
    #expect(try CLIFixture.sha256(URL(fileURLWithPath: file)) == digest)
    // Never downloaded: the offline failure.
    let never = try await cli.runProcess(backend, ["download", "/photos/other"], dataDir: dir)
    #expect(!never.succeeded)
  }

  @Test("a small budget: downloads evict the older unpinned file, never a pinned one")
  func budget() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 400 * 1024
    for id in ["a", "b", "c", "d"] { try await place(backend, id: id, size: size) }
    let budget = ["--cache-budget-mib", "1"]
    let a = try await download(backend, budget + ["/photos/a"], dir: dir)
    let b = try await download(backend, budget + ["/photos/b", "--pin-cached"], dir: dir)
    let c = try await download(backend, budget + ["/photos/c"], dir: dir)
    // a was the least recently used unpinned file.
    #expect(!exists(a["file"]) && exists(b["file"]) && exists(c["file"]))
    let d = try await download(backend, budget + ["/photos/d"], dir: dir)
    // b is older than c but pinned: c goes.
    #expect(exists(b["file"]) && !exists(c["file"]) && exists(d["file"]))
    // Unpinned (and used: d is now the oldest), b is evicted once it is the oldest.
    _ = try await download(backend, budget + ["/photos/b", "--unpin-cached"], dir: dir)
    let again = try await download(backend, budget + ["/photos/c"], dir: dir)
    #expect(exists(b["file"]) && !exists(d["file"]) && exists(again["file"]))
    _ = try await download(backend, budget + ["/photos/a"], dir: dir)
    #expect(!exists(b["file"]))
  }

  @Test("a photo a pending write names is never evicted; the older unnamed one goes instead")
  func pendingWriteProtects() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 400 * 1024
    for id in ["named", "x", "y"] { try await place(backend, id: id, size: size) }
    let budget = ["--cache-budget-mib", "1"]
    let named = try await download(backend, budget + ["/photos/named"], dir: dir)
    // An article naming the photo, written while its server cannot be reached: it stays in
    // the outbox (the local SQLite store), pending.
    let write = await cli.run(
      "http://127.0.0.1:9",
      ["records", "add", "articles", "--field", "title=kept", "--field", "photo=named"],
      dataDir: dir)
    #expect(write.code == 0, "\(write.output.stdout)\(write.output.stderr)")
    let outbox = await cli.run(backend, ["--json", "outbox"], dataDir: dir)
    #expect((outbox.lines.first?["pending"] as? Int) == 1, "\(outbox.output.stdout)")
    let x = try await download(backend, budget + ["/photos/x"], dir: dir)
    let y = try await download(backend, budget + ["/photos/y"], dir: dir)
    // Least recently used is `named`, but the pending write references it: x goes.
    #expect(exists(named["file"]) && !exists(x["file"]) && exists(y["file"]))
  }

  @Test("a compound write's stored file, its record not yet sent, is never evicted")
  func storedPartProtects() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 400 * 1024
    for id in ["stored", "x", "y"] { try await place(backend, id: id, size: size) }
    let budget = ["--cache-budget-mib", "1"]
    let stored = try await download(backend, budget + ["/photos/stored"], dir: dir)
    // An article with a photo, written while its server cannot be reached: one pending
    // compound write whose file part then gets the server's id `stored` (the state after the
    // file was stored and before the record was sent).
    let photo = try CLIFixture.randomFile(in: dir, bytes: 1000, name: "photo.bin")
    let write = await cli.run(
      "http://127.0.0.1:9",
      ["articles", "add", "--title", "with photo", "--attach", "photo=\(photo.path)"],
      dataDir: dir)
    #expect(write.code == 0, "\(write.output.stdout)\(write.output.stderr)")
    let ids = Set(CLIFixture.queuedUploads(in: dir).map { $0.split(separator: ".")[0] })
    let id = try #require(ids.first, "\(CLIFixture.queuedUploads(in: dir))")
    try #require(ids.count == 1)
    try FileQueuedUploadStore(directory: dir.appendingPathComponent("queued-uploads"))
      .writeNote("stored", "ref", for: String(id))
    let outbox = await cli.run(backend, ["--json", "outbox"], dataDir: dir)
    #expect(outbox.output.stdout.contains(#""reference":"stored""#), "\(outbox.output.stdout)")
    let x = try await download(backend, budget + ["/photos/x"], dir: dir)
    let y = try await download(backend, budget + ["/photos/y"], dir: dir)
    #expect(exists(stored["file"]) && !exists(x["file"]) && exists(y["file"]))
  }

  @Test("a pinned photo outlives a sign-in as someone else (public); a private reply does not")
  func pinnedPhotoOutlivesLogin() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let digest = try await place(backend, id: "beach", size: 300_000)
    let pinned = try await download(backend, ["/photos/beach", "--pin-cached"], dir: dir)
    let file = try #require(pinned["file"] as? String)
    // A private reply in the same cache: the list of the user's photos.
    let list = try await cli.runProcess(backend, ["get", "/photos"], dataDir: dir)
    #expect(list.succeeded, "\(list)")
    let cache = try SQLiteResponseCache(
      directory: dir.appendingPathComponent("cache").path, budget: 1 << 30)
    #expect(try cache.allEntries().count == 2)

    try await cli.login(backend.url.absoluteString, user: "bob", dataDir: dir)
    let entries = try cache.allEntries()
    #expect(entries.map(\.url) == [backend.url.absoluteString + "/photos/beach"], "\(entries)")
    #expect(entries.first?.pinned == true)
    // Bob's download of the same photo is the kept file, revalidated: no body crosses.
    let again = try await download(backend, ["/photos/beach"], dir: dir)
    #expect(again["file"] as? String == file)
    #expect(again["cache"] as? String == "revalidated")
    #expect(try CLIFixture.sha256(URL(fileURLWithPath: file)) == digest)
    let logout = await cli.run(backend, ["logout"], dataDir: dir)
    #expect(logout.code == 0)
    #expect(try cache.allEntries().count == 1)
  }

  @Test("two processes download the same photo at once: one body crosses, both get it whole")
  func twoProcessesRace() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let size = 4 * 1024 * 1024 + 11
    let digest = try await place(backend, id: "raced", size: size)
    // Two seconds a body: the second process starts while the first one downloads.
    try await backend.call("POST", "/__photos/raced/serve", json: #"{"rate":2097152}"#)
    async let first = download(backend, ["/photos/raced"], dir: dir)
    async let second = download(backend, ["/photos/raced"], dir: dir)
    let (one, two) = try await (first, second)
    let file = try #require(one["file"] as? String)
    #expect(two["file"] as? String == file)
    #expect(try CLIFixture.sha256(URL(fileURLWithPath: file)) == digest)
    let log = try await served(backend, id: "raced")
    let bytes = log.compactMap { $0["bytes"] as? Int }.reduce(0, +)
    #expect(Double(bytes) <= 1.05 * Double(size), "\(log)")
    #expect(log.filter { $0["method"] as? String == "GET" }.count == 1, "\(log)")
    // Each holder removed its lock file (decision 2519).
    let locks = dir.appendingPathComponent("downloads/.locks").path
    #expect((try? FileManager.default.contentsOfDirectory(atPath: locks)) ?? [] == [])
  }
}
