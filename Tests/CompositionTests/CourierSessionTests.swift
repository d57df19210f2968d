import CourierCore
import CourierDomain
import CourierTestKit
import CourierTestSupport
import Foundation
import Testing

@testable import CourierLinux

/// The façade a library user starts from, against the reference backend: login, an upload
/// with progress, the collections offline first, the session-wide sync, and the path stream.
@Suite("CourierSession against the reference backend", .sharedBackend, .serialized)
struct CourierSessionTests {
  func session(_ backend: ReferenceBackend, _ dir: URL, monitor: ManualPathMonitor? = nil) throws
    -> CourierSession
  {
    var config = CourierConfig(environment: ["HOME": dir.path])
    config.baseURL = backend.url
    config.dataDirectory = dir.appendingPathComponent("data")
    return try CourierSession(config: config, overrides: AdapterOverrides(pathMonitor: monitor))
  }

  /// The reference backend's notes, as a library declares them.
  static let notes = CollectionDescription(
    name: "notes", path: "/notes",
    schema: RecordSchema(idKey: "note_id", versionKey: "rev", updatedAtKey: "modified_at"),
    fields: [RecordField("text", .string, required: true), RecordField("tags", .strings)],
    answers: ServerAnswers(versionTagPrefix: "r"))

  func temporaryDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-session-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
  }

  @Test(
    "a library session frees delivered bytes in process (the courier command opts in to a child)")
  func deliveredBodyRemoval() throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    var config = CourierConfig(environment: ["HOME": dir.path])
    config.baseURL = try #require(URL(string: "http://127.0.0.1:9"))
    config.dataDirectory = dir.appendingPathComponent("data")
    #expect(try CourierSession(config: config).deliveredBodyRemoval == .inProcess)
  }

  @Test("a wrong password is refused in words and saves nothing")
  func wrongPassword() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let courier = try session(backend, dir)
    await #expect(throws: CourierError.self) {
      try await courier.login(username: "alice", password: "wrong")
    }
    #expect(!courier.isLoggedIn)
  }

  @Test("a login answered 503 is retried under one Idempotency-Key, without a token")
  func loginRetried() async throws {
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    transport.enqueue(status: 503, json: #"{"error":{"code":"unavailable","message":"busy"}}"#)
    transport.enqueue(status: 200, json: #"{"access_token":"t1","refresh_token":"r1"}"#)
    var config = CourierConfig(environment: ["HOME": dir.path])
    config.baseURL = try #require(URL(string: "http://127.0.0.1:9"))
    config.dataDirectory = dir.appendingPathComponent("data")
    config.retry.baseDelay = .milliseconds(1)
    config.retry.maxDelay = .milliseconds(1)
    let courier = try CourierSession(
      config: config, overrides: AdapterOverrides(transport: transport))
    try await courier.login(username: "alice", password: "secret")
    #expect(courier.isLoggedIn)
    let logins = transport.requests.filter { $0.path == "/auth/token" }
    #expect(logins.count == 2)
    #expect(logins.allSatisfy { $0.headerFields[.authorization] == nil })
    let keys = Set(logins.compactMap { $0.headerFields[.idempotencyKey] })
    #expect(keys.count == 1, "one key across the attempts: \(keys)")
  }

  @Test("login, upload with progress, add, list cached then fresh, sync: the server has both")
  func wholeJourney() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let courier = try session(backend, dir)
    try await courier.login(username: "alice", password: "secret")
    #expect(courier.isLoggedIn)

    let file = dir.appendingPathComponent("photo.jpg")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "800x600", "plasma:fractal", "-quality", "95", file.path])
    var states: [UploadState] = []
    for try await state in courier.uploads.send(file, title: "Gradient") { states.append(state) }
    guard case .succeeded(let result) = states.last?.phase else {
      Issue.record("the stream did not end with success: \(states)")
      return
    }
    #expect(result.response.status == 201)
    let progress = states.compactMap { state -> Int64? in
      if case .uploading(let sent, _) = state.phase { return sent }
      return nil
    }
    #expect(progress.last == result.bodyLength)
    #expect(progress == progress.sorted())

    let articles = try courier.collections.articles()
    let added = try await articles.add(title: "From the façade", body: "offline first")
    var snapshots: [SyncSnapshot<Article>] = []
    for try await snapshot in articles.list() { snapshots.append(snapshot) }
    #expect(snapshots.map(\.source) == [.cache, .network])
    #expect(snapshots.first?.items.map(\.value.id) == [added.key.id])
    let report = try await courier.sync()
    #expect(report.sent == 1 && report.pending == 0, "\(report)")
    let puts = try await backend.log().filter {
      ($0["method"] as? String) == "PUT" && ($0["path"] as? String) == "/articles/\(added.key.id)"
    }
    #expect(puts.count == 1)
  }

  @Test("records of a collection the library declares: checked, queued, sent with articles")
  func declaredCollection() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let courier = try session(backend, dir)
    try await courier.login(username: "alice", password: "secret")
    let notes = try courier.collections.records(Self.notes)
    await #expect(throws: CourierError.self) { try await notes.add(["tags": .array([])]) }
    let receipt = try await notes.add(["text": .string("hello"), "tags": .array([.string("a")])])
    _ = try await courier.collections.articles().add(title: "beside")
    #expect(try courier.outbox().entries().map(\.key.collection) == ["notes", "articles"])
    let report = try await courier.sync()
    #expect(report.sent == 2 && report.pending == 0, "\(report)")
    let fresh = await notes.refresh()
    #expect(fresh.error == nil)
    #expect(fresh.items.map(\.value.id) == [receipt.key.id])
    #expect(fresh.items.first?.value.fields["text"] == .string("hello"))
    #expect(fresh.items.first?.value.version == 1)
    let changed = try await notes.change(id: receipt.key.id, set: ["text": .string("bye")])
    #expect(changed.enqueue.entry?.operation.baseVersion == 1)
    #expect(try await courier.sync().sent == 1)
    #expect(try notes.record(id: receipt.key.id)?.value.version == 2)
    // A name the configuration does not declare is refused, naming those it does.
    let unknown = #expect(throws: CourierError.self) { try courier.collections.records("pages") }
    #expect(unknown?.userMessage.contains("articles") == true)
    #expect(courier.collections.declared.map(\.name) == ["articles"])
  }

  @Test("sync() sends every collection's records and the queued uploads, in outbox order")
  func sessionWideSync() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    var config = CourierConfig(environment: ["HOME": dir.path])
    config.baseURL = backend.url
    config.dataDirectory = dir.appendingPathComponent("data")
    config.collections = [Self.notes]
    let courier = try CourierSession(config: config)
    try await courier.login(username: "alice", password: "secret")
    let note = try await courier.collections.records("notes").add(["text": .string("first")])
    let article = try await courier.collections.articles().add(title: "second")
    let file = dir.appendingPathComponent("third.jpg")
    try await Tool.run("/usr/bin/convert", ["-size", "64x48", "plasma:fractal", file.path])
    let upload = try await courier.queuedUploads.add(
      file, title: "third", resumable: false, compress: false)
    #expect(
      try courier.outbox().entries().map(\.key.collection) == ["notes", "articles", "uploads"])
    #expect(try courier.queuedUploads.current().map(\.id) == [upload.key.id])
    let report = try await courier.sync()
    #expect(report.sent == 3 && report.pending == 0, "\(report)")
    #expect(try courier.outbox().entries().isEmpty)
    #expect(try courier.queuedUploads.current().isEmpty)
    let writes = try await backend.log().compactMap { entry -> String? in
      guard let method = entry["method"] as? String, let path = entry["path"] as? String,
        method != "GET", !path.hasPrefix("/auth")
      else { return nil }
      return "\(method) \(path)"
    }
    #expect(
      writes == ["PUT /notes/\(note.key.id)", "PUT /articles/\(article.key.id)", "POST /photos"])
  }

  @Test("an upload of a missing file ends the stream with fileUnavailable")
  func missingFile() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let courier = try session(backend, dir)
    do {
      for try await _ in courier.uploads.send(dir.appendingPathComponent("nope.jpg")) {}
      Issue.record("no error")
    } catch let error as CourierError {
      #expect(error.kind == .fileUnavailable)
    }
  }

  @Test("paths.updates() yields the current path, then each change, while it is iterated")
  func paths() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let monitor = ManualPathMonitor()
    let courier = try session(backend, dir, monitor: monitor)
    var iterator = courier.paths.updates().makeAsyncIterator()
    // The first path comes from the stream's subscription: from then on a change reaches it.
    #expect(await iterator.next()?.status == .unknown)
    #expect(monitor.send(.satisfied))
    #expect(await iterator.next()?.status == .satisfied)
  }

  @Test(
    "a collection opened in code, or with a field resolver, sends its files before its record, and its kept copies outlive a restart"
  )
  func attachmentsOutsideTheConfiguration() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    var posts = CollectionDescription.articles
    posts.name = "posts"
    let resolver: FieldResolver = { _, _, mine, _ in mine }
    let file = dir.appendingPathComponent("photo.jpg")
    try await Tool.run("/usr/bin/convert", ["-size", "64x48", "plasma:fractal", file.path])
    // Written by one session and not sent: the copies wait in the data folder.
    let ids = [UUID().uuidString.lowercased(), UUID().uuidString.lowercased()]
    do {
      let first = try session(backend, dir)
      try await first.login(username: "alice", password: "secret")
      _ = try await first.collections.records(posts).add(
        JSONRecord(id: ids[0], fields: ["title": .string("in code"), "body": .string("")]),
        attaching: ["photo": file])
      _ = try await first.collections.records(.articles, resolver: resolver).add(
        JSONRecord(id: ids[1], fields: ["title": .string("resolver"), "body": .string("")]),
        attaching: ["photo": file])
    }
    // A new session opens the store (and sweeps the folder) before those collections are opened
    // again: the copies their pending writes name stay.
    let second = try session(backend, dir)
    #expect(try second.outbox().entries().count == 2)
    _ = try second.collections.records(posts)
    _ = try second.collections.records(.articles, resolver: resolver)
    let report = try await second.sync()
    #expect(
      report.sent == 2 && report.pending == 0,
      "\(report) \((try? second.outbox().entries().map { "\($0.state)" }) ?? [])")
    let stored = try await second.collections.articles().refresh()
    #expect(stored.error == nil)
    let photos = stored.items.compactMap(\.value.photo)
    #expect(photos.count == 2, "\(stored.items.map(\.value))")
    #expect(!photos.contains { $0.hasPrefix("courier-local:") }, "\(photos)")
    #expect(Set(photos).count == 2)
  }
}
