import CourierCore
import CourierDomain
import CourierLinux
import CourierTestKit
import Foundation
import Synchronization
import Testing

/// `CourierSession.collections.articles()` over fakes and a real SQLite store in a temporary data
/// folder: the write made before the replayer exists, the session's `sync()` and `watch()` under
/// the cross-process sync lock, and the path monitor shared by `paths` and `watch()`.
@Suite("Articles")
struct ArticlesTests {
  struct Fixture {
    let directory: URL
    let monitor = ManualPathMonitor()
    let transport = InMemoryTransport()
    let session: CourierSession

    /// - Parameter directory: the folder of another fixture, for a second session (another
    ///   process's) on the same data folder; nil for a new one.
    init(directory shared: URL? = nil) throws {
      directory =
        shared
        ?? FileManager.default.temporaryDirectory
        .appendingPathComponent("courier-articles-\(UUID().uuidString)")
      var config = CourierConfig(environment: ["HOME": directory.path])
      config.dataDirectory = directory.appendingPathComponent("data")
      config.token = "token"
      config.retry.maxAttempts = 1
      session = try CourierSession(
        config: config, overrides: AdapterOverrides(transport: transport, pathMonitor: monitor))
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
  }

  /// The server's reply to a PUT of article `id` titled `title`: it echoes the record.
  static func reply(_ id: String, _ title: String) -> String {
    #"{"id":"\#(id)","title":"\#(title)","body":"","version":1,"updated_at":"2026-12-01T00:00:00Z"}"#
  }

  /// Waits (bounded) until `condition` holds. The bound is generous: beside the whole suite on
  /// two cores, a pool thread can be kept busy by other tests for tens of seconds.
  static func eventually(_ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(120)
    while !condition() {
      if clock.now > deadline { return false }
      try? await clock.sleep(for: .milliseconds(5))
    }
    return true
  }

  @Test("an add before the replayer exists writes what the engine writes, and is counted by it")
  func addBeforeTheReplayer() async throws {
    // Two sessions: in one the add is the first call (straight to the store), in the other the
    // state is asked first, which makes the engine and the replayer (the engine's `create`).
    let lean = try Fixture()
    let engine = try Fixture()
    defer {
      lean.remove()
      engine.remove()
    }
    let article = Article(id: "a", title: "first", body: "text")
    let leanArticles = try lean.session.collections.articles()
    let engineArticles = try engine.session.collections.articles()
    let (leanOutbox, engineOutbox) = (try lean.session.outbox(), try engine.session.outbox())
    #expect(engineOutbox.state.pendingCount == 0)
    let leanReceipt = try await leanArticles.add(article)
    let engineReceipt = try await engineArticles.add(article)
    #expect(try leanOutbox.pendingCount() == 1)
    // The replayer made after the write reads it with the rest of the outbox.
    #expect(leanOutbox.state.pendingCount == 1)
    #expect(engineOutbox.state.pendingCount == 1)
    #expect(leanReceipt.key == engineReceipt.key)
    #expect(leanReceipt.record == engineReceipt.record)
    #expect(leanReceipt.record?.state == .created)
    let leanEntries = try leanOutbox.entries()
    let engineEntries = try engineOutbox.entries()
    try #require(leanEntries.count == 1 && engineEntries.count == 1)
    let (made, expected) = (leanEntries[0], engineEntries[0])
    #expect(made.id == leanReceipt.operationID)
    #expect(made.sequence == expected.sequence)
    #expect(made.state == expected.state)
    #expect(made.attempts == expected.attempts)
    #expect(made.operation.key == expected.operation.key)
    #expect(made.operation.kind == expected.operation.kind)
    #expect(made.operation.payload == expected.operation.payload)
    #expect(made.operation.baseVersion == expected.operation.baseVersion)
    #expect(try leanArticles.stored(id: "a") == engineArticles.stored(id: "a"))
    // A later write goes through the engine, now made, and is counted as before.
    try await leanArticles.add(Article(id: "b", title: "second", body: ""))
    #expect(leanOutbox.state.pendingCount == 2)
    #expect(try leanOutbox.pendingCount() == 2)
    // And the first add is sent as any write is.
    lean.transport.enqueue(status: 201, json: Self.reply("a", "first"))
    lean.transport.enqueue(status: 201, json: Self.reply("b", "second"))
    let report = try await lean.session.sync()
    #expect(report.sent == 2, "\(report)")
    #expect(try leanOutbox.pendingCount() == 0)
  }

  @Test("a data folder named with a space, a percent sign and accents holds the store there")
  func dataFolderWithOddName() async throws {
    let base = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-odd-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: base) }
    var config = CourierConfig(environment: ["HOME": base.path])
    config.dataDirectory = URL(fileURLWithPath: base.path + "/a b%20é/", isDirectory: true)
    config.token = "token"
    let session = try CourierSession(
      config: config,
      overrides: AdapterOverrides(transport: InMemoryTransport(), pathMonitor: ManualPathMonitor()))
    try await session.collections.articles().add(Article(id: "a", title: "kept", body: ""))
    #expect(FileManager.default.fileExists(atPath: base.path + "/a b%20é/courier.sqlite"))
    #expect(!FileManager.default.fileExists(atPath: base.path + "/a b%2520é"))
    #expect(!FileManager.default.fileExists(atPath: base.path + "/a%20b%20é"))
  }

  @Test("sync() while another process holds the data folder's lock: busy, the write kept")
  func busyElsewhere() async throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let session = fixture.session
    try await session.collections.articles().add(Article(id: "a", title: "kept", body: ""))
    // A lock taken on another descriptor conflicts as another process's would.
    guard
      case .acquired(let other) = try SyncLock.acquire(
        in: fixture.session.environment.config.dataDirectory, activity: "a test")
    else {
      Issue.record("the lock was not free")
      return
    }
    await #expect(throws: SyncInProgressError.self) { try await session.sync() }
    #expect(try session.outbox().state.pendingCount == 1)
    #expect(fixture.transport.requests.isEmpty)
    other.release()
    fixture.transport.enqueue(status: 201, json: Self.reply("a", "kept"))
    let report = try await session.sync()
    #expect(report.sent == 1, "\(report)")
    #expect(fixture.transport.requests.count == 1)
  }

  @Test("watch() while another process holds the lock waits for it, saying who, then runs")
  func watchWaitsForTheLock() async throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let directory = fixture.session.environment.config.dataDirectory
    guard case .acquired(let other) = try SyncLock.acquire(in: directory, activity: "a test")
    else {
      Issue.record("the lock was not free")
      return
    }
    let told = Mutex<[SyncLock.Holder]>([])
    let session = fixture.session
    let watching = Task {
      let states = session.watch(activity: "sync --watch") { holder in
        told.withLock { $0.append(holder) }
      }
      var iterator = states.makeAsyncIterator()
      return try await iterator.next()
    }
    // The stream waits (decision 2426): it neither throws SyncInProgressError nor ends.
    #expect(await Self.eventually { !told.withLock { $0.isEmpty } })
    #expect(told.withLock { $0 } == [SyncLock.Holder(pid: getpid(), activity: "a test")])
    other.release()
    #expect(try await watching.value != nil, "the watch ended without a state")
  }

  @Test("sync() while this session's watch() holds the lock goes ahead, not busy")
  func syncDuringWatch() async throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    var states = fixture.session.watch().makeAsyncIterator()
    _ = try await states.next()  // the watch holds the lock from here
    let report = try await fixture.session.sync()
    #expect(report.stoppedBy == nil)
    // Another process would be told who holds it.
    if case .held(let holder) = try SyncLock.acquire(
      in: fixture.session.environment.config.dataDirectory, activity: "a test")
    {
      #expect(holder.activity == "sync --watch")
      #expect(holder.pid == getpid())
    } else {
      Issue.record("the watch did not hold the lock")
    }
  }

  @Test("paths and watch() run the one path monitor once, until the last one stops")
  func sharedMonitor() async throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let session = fixture.session
    let watching = Task {
      for try await _ in session.watch() {}
    }
    #expect(await Self.eventually { fixture.monitor.runCount.active == 1 })
    var paths = fixture.session.paths.updates().makeAsyncIterator()
    _ = await paths.next()
    #expect(fixture.monitor.send(.satisfied))
    #expect(await paths.next()?.status == .satisfied)
    #expect(fixture.monitor.runCount == (started: 1, active: 1))
    watching.cancel()
    // The path stream still runs it.
    #expect(fixture.monitor.send(.unsatisfied))
    #expect(await paths.next()?.status == .unsatisfied)
    #expect(fixture.monitor.runCount.active == 1)
  }

  @Test("a write made while watch() runs is sent by itself")
  func writesSentWhileWatching() async throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let session = fixture.session
    let (articles, outbox) = (try session.collections.articles(), try session.outbox())
    let watching = Task {
      for try await _ in session.watch() {}
    }
    defer { watching.cancel() }
    #expect(await Self.eventually { fixture.monitor.runCount.active == 1 })
    #expect(fixture.monitor.send(.satisfied))
    #expect(await Self.eventually { outbox.state.isOnline })
    fixture.transport.enqueue(status: 201, json: Self.reply("b", "sent by itself"))
    try await articles.add(Article(id: "b", title: "sent by itself", body: ""))
    #expect(await Self.eventually { outbox.state.pendingCount == 0 })
    #expect(fixture.transport.requests.map(\.path) == ["/articles/b"])
  }

  @Test("another process's write reaches a watch whose count was stale when it began")
  func othersWriteAfterAStaleCount() async throws {
    let fixture = try Fixture()
    defer { fixture.remove() }
    let watcher = fixture.session
    let outbox = try watcher.outbox()
    try await watcher.collections.articles().add(Article(id: "a", title: "first", body: ""))
    #expect(outbox.state.pendingCount == 1)
    // Another process (a second session on the same folder) sends it: this one still counts 1,
    // and a write that brings the count back to 1 must still be noticed as new.
    let other = try Fixture(directory: fixture.directory)
    other.transport.enqueue(status: 201, json: Self.reply("a", "first"))
    #expect(try await other.session.sync().sent == 1)
    let watching = Task {
      for try await _ in watcher.watch() {}
    }
    defer { watching.cancel() }
    #expect(await Self.eventually { fixture.monitor.runCount.active == 1 })
    #expect(fixture.monitor.send(.satisfied))
    #expect(await Self.eventually { outbox.state.isOnline && outbox.state.pendingCount == 0 })
    fixture.transport.enqueue(status: 201, json: Self.reply("b", "later"))
    try await other.session.collections.articles().add(Article(id: "b", title: "later", body: ""))
    #expect(await Self.eventually { fixture.transport.requests.map(\.path) == ["/articles/b"] })
    #expect(other.transport.requests.map(\.path) == ["/articles/a"])
  }
}
