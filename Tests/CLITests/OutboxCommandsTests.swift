import CourierCLI
import CourierCLITestSupport
import CourierTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `courier outbox retry|discard`, an unreadable session, and two `courier sync` at once,
/// against the reference backend.
@Suite("Outbox retry, discard and concurrent syncs", .serialized, .sharedBackend)
struct OutboxCommandsTests {
  let cli = CLIFixture("courier-outbox", globalFlags: ["--max-attempts", "1"])

  /// Arms one 422 with a JSON error code for the next request under /articles.
  func refuseNext(_ backend: ReferenceBackend, count: Int = 1) async throws {
    try await backend.call(
      "POST", "/__chaos", json: #"{"fail_next":\#(count),"status":422,"path":"/articles"}"#)
  }

  func serverTitles(_ backend: ReferenceBackend) async throws -> [String] {
    try await CLIFixture.articles(backend).compactMap { $0["title"] as? String }.sorted()
  }

  @Test("a refused entry (422) is retried under a new key once the server accepts it")
  func retryOne() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = backend.url.absoluteString
    try await refuseNext(backend)
    let add = await cli.run(
      url, ["--json", "articles", "add", "--title", "Refused once"], dataDir: dir)
    #expect(add.code == 65, "\(add.output.stdout)")
    let box = try await cli.outbox(url, dataDir: dir)
    #expect(box["rejected"] as? Int == 1)
    let entry = try #require((box["entries"] as? [[String: Any]])?.first)
    let oldID = try #require(entry["operation_id"] as? String)

    let retry = await cli.run(url, ["--json", "outbox", "retry", oldID], dataDir: dir)
    #expect(retry.code == 0, "\(retry.output.stdout) \(retry.output.stderr)")
    let line = try #require(retry.lines.first)
    #expect(line["sent"] as? Int == 1)
    let newID = (line["retried"] as? [[String: Any]])?.first?["operation_id"] as? String
    #expect(newID != nil && newID != oldID)
    #expect(try await serverTitles(backend) == ["Refused once"])
    let after = try await cli.outbox(url, dataDir: dir)
    #expect(after["pending"] as? Int == 0 && after["rejected"] as? Int == 0)
    // The new key reached the server; the old one only carried the refusal.
    let keys = try await backend.log().compactMap { $0["idempotency_key"] as? String }
    let sentID = try #require(newID)
    #expect(keys.contains(oldID) && keys.contains(sentID))
  }

  @Test("retry --all requeues every refused entry; unknown ids and bad usage are clear")
  func retryAll() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = backend.url.absoluteString
    try await refuseNext(backend, count: 2)
    #expect(await cli.run(url, ["articles", "add", "--title", "A"], dataDir: dir).code == 65)
    #expect(await cli.run(url, ["articles", "add", "--title", "B"], dataDir: dir).code == 65)
    #expect(try await cli.outbox(url, dataDir: dir)["rejected"] as? Int == 2)

    let unknown = await cli.run(url, ["outbox", "retry", "#99"], dataDir: dir)
    #expect(unknown.code == 65)
    #expect(unknown.output.stderr.contains("No outbox entry is “#99”"))
    #expect(await cli.run(url, ["outbox", "retry"], dataDir: dir).code == 64)
    #expect(await cli.run(url, ["outbox", "discard", "--all"], dataDir: dir).code == 64)
    #expect(await cli.run(url, ["outbox", "retry", "1", "--all"], dataDir: dir).code == 64)

    let retry = await cli.run(url, ["outbox", "retry", "--all"], dataDir: dir)
    #expect(retry.code == 0, "\(retry.output.stdout) \(retry.output.stderr)")
    #expect(retry.output.stdout.contains("2 entries"))
    #expect(try await serverTitles(backend) == ["A", "B"])
    #expect(try await cli.outbox(url, dataDir: dir)["rejected"] as? Int == 0)
  }

  @Test("a conflict kept for the user (manual policy) is retried on the server's version")
  func retryConflict() async throws {
    let backend = try await SharedBackend.fresh()
    let alice = try await cli.client(backend)
    let bob = try await cli.client(backend, user: "bob")
    defer { CLIFixture.remove(alice, bob) }
    let url = backend.url.absoluteString
    let manual = ["COURIER_CONFLICT_POLICY": "manual"]
    let add = await cli.run(url, ["--json", "articles", "add", "--title", "Base"], dataDir: alice)
    let id = try #require(add.lines.first?["id"] as? String)
    #expect(await cli.run(url, ["articles", "list"], dataDir: bob).code == 0)
    #expect(
      await cli.run(url, ["articles", "edit", id, "--title", "Bob's"], dataDir: bob).code == 0)
    let edit = await cli.run(
      url, ["articles", "edit", id, "--title", "Alice's"], dataDir: alice, environment: manual)
    #expect(edit.code == 65, "\(edit.output.stderr)")
    #expect(try await cli.outbox(url, dataDir: alice)["conflicted"] as? Int == 1)

    let retry = await cli.run(
      url, ["--json", "outbox", "retry", "--all"], dataDir: alice, environment: manual)
    #expect(retry.code == 0, "\(retry.output.stdout) \(retry.output.stderr)")
    let retried = (retry.lines.first?["retried"] as? [[String: Any]])?.first
    #expect(retried?["base_version"] as? Int == 2)
    #expect(try await serverTitles(backend) == ["Alice's"])
    #expect(try await cli.outbox(url, dataDir: alice)["conflicted"] as? Int == 0)
  }

  @Test("discard drops a refused edit and shows the server's copy again")
  func discard() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = backend.url.absoluteString
    let add = await cli.run(
      url, ["--json", "articles", "add", "--title", "Original"], dataDir: dir)
    #expect(add.code == 0)
    let id = try #require(add.lines.first?["id"] as? String)
    try await refuseNext(backend)
    let edit = await cli.run(
      url, ["articles", "edit", id, "--title", "Refused edit"], dataDir: dir)
    #expect(edit.code == 65)
    let refused = try #require(
      (try await cli.outbox(url, dataDir: dir)["entries"] as? [[String: Any]])?.first)
    let sequence = try #require(refused["sequence"] as? Int)
    let discard = await cli.run(url, ["--json", "outbox", "discard", "#\(sequence)"], dataDir: dir)
    #expect(discard.code == 0, "\(discard.output.stdout) \(discard.output.stderr)")
    #expect(discard.lines.first?["restored"] as? Bool == true)
    let list = await cli.run(url, ["--json", "articles", "list", "--offline"], dataDir: dir)
    let articles = list.lines.first?["articles"] as? [[String: Any]]
    #expect(articles?.count == 1)
    #expect(articles?.first?["title"] as? String == "Original")
    #expect(articles?.first?["state"] as? String == "synced")
    let box = try await cli.outbox(url, dataDir: dir)
    #expect((box["entries"] as? [Any])?.isEmpty == true)
    #expect(await cli.run(url, ["outbox", "discard", "\(sequence)"], dataDir: dir).code == 65)
  }

  @Test(
    "an unreadable session keeps writes pending; logging in again sends them",
    arguments: ["garbage", "empty", "wrong types"])
  func unreadableSession(kind: String) async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = backend.url.absoluteString
    let content =
      switch kind {
      case "garbage": "\u{1}\u{2}not json"
      case "empty": ""
      default: #"{"accessToken": ["x"], "refreshToken": 7}"#
      }
    try Data(content.utf8).write(to: dir.appendingPathComponent("session.json"))
    let add = await cli.run(url, ["--json", "articles", "add", "--title", "Kept"], dataDir: dir)
    #expect(add.code == 0, "\(add.output.stdout) \(add.output.stderr)")
    #expect(add.lines.first?["status"] as? String == "ok")
    let notSent = add.lines.first?["not_sent"] as? [String: Any]
    #expect(notSent?["kind"] as? String == "unauthorized")
    let box = try await cli.outbox(url, dataDir: dir)
    #expect(box["pending"] as? Int == 1 && box["rejected"] as? Int == 0)

    let sync = await cli.run(url, ["sync"], dataDir: dir)
    #expect(sync.code == 77, "\(sync.output.stderr)")
    let get = await cli.run(url, ["--json", "get", "/articles"], dataDir: dir)
    #expect(get.code == 77)
    #expect(get.lines.first?["code"] as? String == "session_unreadable")
    let said = get.lines.first?["message"] as? String ?? ""
    #expect(said.contains("session.json") && said.contains("log in again"), "\(said)")
    #expect(try await cli.outbox(url, dataDir: dir)["pending"] as? Int == 1)

    let login = await cli.run(
      url, ["login", "--username", "alice", "--password-stdin"], dataDir: dir, input: "secret\n")
    #expect(login.code == 0)
    let again = await cli.run(url, ["sync"], dataDir: dir)
    #expect(again.code == 0, "\(again.output.stderr)")
    #expect(try await serverTitles(backend) == ["Kept"])
  }

  // MARK: - Two syncs of one data folder

  /// Starts the built `courier` with this client's home and data folder.
  func start(_ url: String, _ arguments: [String], dir: URL) throws -> (Process, Pipe, Pipe) {
    let process = try cli.process(url, arguments, dataDir: dir)
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    return (process, out, err)
  }

  /// Waits (bounded) until a condition holds, checking it every few milliseconds.
  func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while try await !condition() {
      try #require(ContinuousClock.now < deadline, "timed out waiting until \(what)")
      try await Task.sleep(for: .milliseconds(20))
    }
  }

  func lockSays(_ dir: URL, pid: Int32, _ activity: String) -> Bool {
    let text =
      (try? String(contentsOf: dir.appendingPathComponent("sync.lock"), encoding: .utf8)) ?? ""
    return text == "\(pid)\n\(activity)\n"
  }

  /// Starts `courier sync --watch` for this client and waits until it holds the lock.
  func startWatch(_ url: String, dir: URL) async throws -> Process {
    let (watch, _, _) = try start(url, ["sync", "--watch"], dir: dir)
    do {
      try await waitUntil("the watch holds the lock") {
        lockSays(dir, pid: watch.processIdentifier, "sync --watch")
      }
    } catch {
      kill(watch.processIdentifier, SIGKILL)
      throw error
    }
    return watch
  }

  /// Queues a write offline, then starts `courier --json sync` with every PUT held at the server
  /// until released: that sync is mid-send, holding the lock, for as long as a test's checks
  /// take, however loaded the machine. Returns once its PUT is held.
  func heldSync(_ backend: ReferenceBackend, dir: URL, writing title: String) async throws
    -> (Process, Pipe)
  {
    let add = await cli.run(
      CLIFixture.deadURL, ["articles", "add", "--title", title], dataDir: dir)
    #expect(add.code == 0, "\(add.output.stderr)")
    try await backend.call("POST", "/__hold", json: #"{"after":0,"method":"PUT"}"#)
    let (sync, out, _) = try start(backend.url.absoluteString, ["--json", "sync"], dir: dir)
    do {
      try await waitUntil("the sync's PUT is held at the server") {
        try await CLIFixture.heldRequests(backend) > 0
      }
    } catch {
      kill(sync.processIdentifier, SIGKILL)
      throw error
    }
    #expect(lockSays(dir, pid: sync.processIdentifier, "sync"))
    return (sync, out)
  }

  @Test("a second sync while one runs exits 75 at once naming the first; nothing is sent twice")
  func concurrentSyncs() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = backend.url.absoluteString
    let (first, out) = try await heldSync(backend, dir: dir, writing: "Once")
    defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }

    let second = await cli.run(url, ["--json", "sync"], dataDir: dir)
    #expect(second.code == 75, "\(second.output.stdout)")
    let line = try #require(second.lines.first)
    #expect(line["kind"] as? String == "busy")
    #expect(line["holder_pid"] as? Int == Int(first.processIdentifier))
    #expect((line["message"] as? String)?.contains("pid \(first.processIdentifier)") == true)
    // A write meanwhile is saved and left to the running sync's next pass or the next sync.
    let add = await cli.run(
      url, ["--json", "articles", "add", "--title", "Meanwhile"], dataDir: dir)
    #expect(add.code == 0)
    #expect((add.lines.first?["not_sent"] as? [String: Any])?["kind"] as? String == "busy")

    try await backend.call("POST", "/__hold", json: #"{"release":true}"#)
    #expect(await first.exited(), "the first sync never ended")
    let output = out.fileHandleForReading.readDataToEndOfFile()
    #expect(first.terminationStatus == 0, "\(String(decoding: output, as: UTF8.self))")
    let last = await cli.run(url, ["sync"], dataDir: dir)
    #expect(last.code == 0, "\(last.output.stderr)")
    #expect(try await serverTitles(backend) == ["Meanwhile", "Once"])
    let puts = try await backend.log().filter { $0["method"] as? String == "PUT" }
    #expect(puts.count == 2, "\(puts)")
  }

  @Test("a write made beside a running sync --watch is sent by that watch, with no path change")
  func watchSendsOthersWrites() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = backend.url.absoluteString
    let watch = try await startWatch(url, dir: dir)
    defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
    // This process finds the lock held and leaves the write to the watch.
    let add = await cli.run(url, ["--json", "articles", "add", "--title", "Beside"], dataDir: dir)
    #expect(add.code == 0)
    #expect((add.lines.first?["not_sent"] as? [String: Any])?["kind"] as? String == "busy")
    try await waitUntil("the watch sends it") { try await serverTitles(backend) == ["Beside"] }
    let puts = try await backend.log().filter { $0["method"] as? String == "PUT" }
    #expect(puts.count == 1, "\(puts)")
    watch.terminate()
    #expect(await watch.exited(), "sync --watch ignored SIGTERM")
  }

  /// What a started process printed so far on a pipe, read as it comes (a condition to wait
  /// on, not an end to wait for).
  final class Printed: Sendable {
    private let text = Mutex("")

    init(_ pipe: Pipe) {
      pipe.fileHandleForReading.readabilityHandler = { [self] handle in
        let data = handle.availableData
        if data.isEmpty {
          handle.readabilityHandler = nil
        } else {
          text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
      }
    }

    var lines: [[String: Any]] {
      text.withLock { $0 }.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
      }
    }
  }

  @Test("sync --watch started while a one-shot sync holds the lock waits for it, then watches")
  func watchWaitsForOneShot() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = backend.url.absoluteString
    let (oneShot, _) = try await heldSync(backend, dir: dir, writing: "First")
    defer { if oneShot.isRunning { kill(oneShot.processIdentifier, SIGKILL) } }

    // The watch does not exit 75 here: it says it waits, and waits (decision 2426).
    let (watch, out, _) = try start(url, ["--json", "sync", "--watch"], dir: dir)
    defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
    let printed = Printed(out)
    try await waitUntil("the watch says it waits") {
      printed.lines.contains { $0["status"] as? String == "waiting" }
    }
    let waiting = try #require(printed.lines.first { $0["status"] as? String == "waiting" })
    #expect(waiting["holder_pid"] as? Int == Int(oneShot.processIdentifier))
    #expect(waiting["holder_activity"] as? String == "sync")
    #expect(watch.isRunning, "the watch ended instead of waiting: \(watch.terminationStatus)")
    #expect(lockSays(dir, pid: oneShot.processIdentifier, "sync"))

    try await backend.call("POST", "/__hold", json: #"{"release":true}"#)
    #expect(await oneShot.exited(), "the one-shot sync never ended")
    #expect(oneShot.terminationStatus == 0)
    // The lock is free: the watch takes it and runs (a state line), then sends what comes.
    try await waitUntil("the watch holds the lock") {
      lockSays(dir, pid: watch.processIdentifier, "sync --watch")
    }
    try await waitUntil("the watch prints its state") {
      printed.lines.contains { $0["pending"] != nil }
    }
    let add = await cli.run(url, ["--json", "articles", "add", "--title", "Later"], dataDir: dir)
    #expect(add.code == 0)
    try await waitUntil("the watch sends the later write") {
      try await serverTitles(backend) == ["First", "Later"]
    }
    watch.terminate()
    #expect(await watch.exited(), "sync --watch ignored SIGTERM")
    #expect(watch.terminationStatus == 0)
  }

  @Test("sync while sync --watch runs exits 75 saying so; after the watch ends it syncs")
  func syncBesideWatch() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let url = backend.url.absoluteString
    let watch = try await startWatch(url, dir: dir)
    defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
    let second = await cli.run(url, ["sync"], dataDir: dir)
    #expect(second.code == 75)
    #expect(second.output.stderr.contains("pid \(watch.processIdentifier), running sync --watch"))
    watch.terminate()
    #expect(await watch.exited(), "sync --watch ignored SIGTERM")
    let after = await cli.run(url, ["sync"], dataDir: dir)
    #expect(after.code == 0, "\(after.output.stderr)")
  }
}
