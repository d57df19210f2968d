import CourierCLI
import CourierCLITestSupport
import CourierLinux
import CourierTestSupport
import Foundation
import Testing

/// Issue 24, item 1 (decision 2401), through the CLI against the real reference backend, with
/// two data directories as two devices: an edit of an article another device deleted is settled
/// by the conflict policy, on the backend that re-creates it (its `PUT` creates a missing
/// record) and on one that answers `409` without a current version (`gone_answer`, a test-only
/// switch); and a write whose replies never prove it is parked while the writes behind it go.
@Suite("No head-of-line blocking against the reference backend", .serialized, .sharedBackend)
struct HeadOfLineTests {
  let cli = CLIFixture("courier-hol", globalFlags: ["--max-attempts", "1"])

  struct Case: Sendable, CustomStringConvertible {
    /// The backend's `gone_answer`: `recreate` (the contract's reading) or `conflict`.
    var server: String
    var policy: String
    var description: String { "\(server), \(policy)" }
  }

  /// Two devices; A edits an article offline and adds another, B deletes the article meanwhile.
  struct Scene {
    let a: URL
    let b: URL
    let id: String
  }

  func scene(_ backend: ReferenceBackend, goneAnswer: String) async throws -> Scene {
    try await backend.call("POST", "/__config", json: #"{"gone_answer":"\#(goneAnswer)"}"#)
    let url = backend.url.absoluteString
    let a = try await cli.client(backend)
    let b = try await cli.client(backend, user: "bob")
    let added = await cli.run(url, ["articles", "add", "--title", "base"], dataDir: a)
    try #require(added.code == 0, "\(added.output.stderr)")
    let listed = await cli.run(url, ["articles", "list", "--json"], dataDir: b)
    let id = try #require(
      (listed.lines.last?["articles"] as? [[String: Any]])?.first?["id"] as? String)
    _ = await cli.run(url, ["articles", "list"], dataDir: a)
    // A, offline: an edit of the article, then a new article behind it in the queue.
    let edit = await cli.run(
      CLIFixture.deadURL, ["articles", "edit", id, "--title", "A's edit"], dataDir: a)
    try #require(edit.code == 0, "\(edit.output.stderr)")
    let other = await cli.run(
      CLIFixture.deadURL, ["articles", "add", "--title", "behind it"], dataDir: a)
    try #require(other.code == 0, "\(other.output.stderr)")
    // B, online, deletes the article.
    let deleted = await cli.run(url, ["articles", "delete", id], dataDir: b)
    try #require(deleted.code == 0, "\(deleted.output.stderr)")
    return Scene(a: a, b: b, id: id)
  }

  func serverTitles(_ backend: ReferenceBackend) async throws -> [String: String] {
    var titles: [String: String] = [:]
    for article in try await CLIFixture.articles(backend) {
      if let id = article["id"] as? String { titles[id] = article["title"] as? String }
    }
    return titles
  }

  @Test(
    "an edit of an article deleted on another device is settled by the policy",
    arguments: [
      Case(server: "recreate", policy: "lastWriteWins"),
      Case(server: "recreate", policy: "serverWins"),
      Case(server: "recreate", policy: "manual"),
      Case(server: "conflict", policy: "lastWriteWins"),
      Case(server: "conflict", policy: "serverWins"),
      Case(server: "conflict", policy: "manual"),
    ])
  func editAgainstDeletion(_ row: Case) async throws {
    let backend = try await SharedBackend.fresh()
    let url = backend.url.absoluteString
    let scene = try await scene(backend, goneAnswer: row.server)
    defer { CLIFixture.remove(scene.a, scene.b) }
    let policy = ["COURIER_CONFLICT_POLICY": row.policy]

    let sync = await cli.run(url, ["sync", "--json"], dataDir: scene.a, environment: policy)
    let report = try #require(sync.lines.first, "\(sync.output.stdout)\(sync.output.stderr)")
    #expect(sync.code == (row.policy == "manual" ? 65 : 0), "\(sync.output.stdout)")
    #expect(report["conflicts_gone"] as? Int == 1, "\(report)")
    #expect(report["pending"] as? Int == 0, "the write behind it went: \(report)")
    let titles = try await serverTitles(backend)
    #expect(titles.values.contains("behind it"), "\(titles)")
    let outbox = try await cli.outbox(url, dataDir: scene.a)
    let local = await cli.run(url, ["articles", "list", "--offline", "--json"], dataDir: scene.a)
    let localIDs = ((local.lines.first?["articles"] as? [[String: Any]]) ?? []).compactMap {
      $0["id"] as? String
    }

    switch row.policy {
    case "lastWriteWins":
      // The edit re-creates the article, with A's title, on either server.
      #expect(report["conflicts_recreated"] as? Int == 1)
      #expect(titles[scene.id] == "A's edit", "\(titles)")
      #expect(outbox["entries"] as? [Any] == nil || (outbox["entries"] as? [Any])?.isEmpty == true)
    case "serverWins":
      // The deletion wins, and says so: the edit is dropped (a re-creation deleted again).
      #expect(report["conflicts_gone_dropped"] as? Int == 1)
      #expect(titles[scene.id] == nil, "\(titles)")
      #expect(!localIDs.contains(scene.id))
      #expect((outbox["entries"] as? [Any])?.isEmpty == true)
    default:
      // Kept for A, both sides shown; `outbox retry` then keeps A's edit.
      #expect(report["conflicts_kept"] as? Int == 1)
      let entries = try #require(outbox["entries"] as? [[String: Any]])
      let kept = try #require(entries.first { $0["id"] as? String == scene.id })
      #expect(kept["state"] as? String == "conflict" && kept["server_deleted"] as? Bool == true)
      #expect(localIDs.contains(scene.id), "A's edit stays visible")
      let text = await cli.run(url, ["outbox"], dataDir: scene.a)
      #expect(text.output.stdout.contains("deleted there"), "\(text.output.stdout)")
      let sequence = try #require(kept["sequence"] as? Int)
      let retry = await cli.run(
        url, ["outbox", "retry", String(sequence)], dataDir: scene.a, environment: policy)
      #expect(retry.code == 0, "\(retry.output.stdout)\(retry.output.stderr)")
      #expect(try await serverTitles(backend)[scene.id] == "A's edit")
      #expect(try await cli.outbox(url, dataDir: scene.a)["conflicted"] as? Int == 0)
    }
    // B sees what the server holds.
    let seen = await cli.run(url, ["articles", "list", "--json"], dataDir: scene.b)
    let seenIDs = ((seen.lines.last?["articles"] as? [[String: Any]]) ?? []).compactMap {
      $0["id"] as? String
    }
    #expect(seenIDs.contains(scene.id) == (row.policy != "serverWins"))
  }

  @Test("server wins says that the edit was dropped because the article was deleted")
  func serverWinsSaysSo() async throws {
    let backend = try await SharedBackend.fresh()
    let scene = try await scene(backend, goneAnswer: "conflict")
    defer { CLIFixture.remove(scene.a, scene.b) }
    let sync = await cli.run(
      backend.url.absoluteString, ["sync"], dataDir: scene.a,
      environment: ["COURIER_CONFLICT_POLICY": "serverWins"])
    #expect(sync.code == 0, "\(sync.output.stderr)")
    #expect(
      sync.output.stdout.contains(
        "1 against a record deleted on the server: 0 re-created by your edit, 1 dropped as the "
          + "deletion won"), "\(sync.output.stdout)")
  }

  @Test(
    "a write whose replies never prove it is parked at its bound; the others go; retry sends it"
  )
  func parkedWhileTheOthersGo() async throws {
    let backend = try await SharedBackend.fresh()
    let url = backend.url.absoluteString
    let a = try await cli.client(backend)
    defer { CLIFixture.remove(a) }
    let added = await cli.run(url, ["articles", "add", "--title", "base"], dataDir: a)
    try #require(added.code == 0, "\(added.output.stderr)")
    let listed = await cli.run(url, ["articles", "list", "--json"], dataDir: a)
    let id = try #require(
      (listed.lines.last?["articles"] as? [[String: Any]])?.first?["id"] as? String)
    for arguments in [
      ["articles", "edit", id, "--title", "first edit"], ["articles", "add", "--title", "other"],
    ] {
      let write = await cli.run(CLIFixture.deadURL, arguments, dataDir: a)
      try #require(write.code == 0, "\(write.output.stderr)")
    }
    // Something on the way answers every PUT of this article with a login page (511, which the
    // server does not keep under the key); the rest, reads of it included, is served.
    try await backend.call(
      "POST", "/__chaos",
      json:
        #"{"fail_all":true,"status":511,"format":"html","method":"PUT","path":"/articles/\#(id)"}"#
    )
    // Up to its bound (3 sends, those the offline writes' own replays tried counted), nothing
    // behind it leaves: the network may be at fault (decision 0414; `OutboxReplayerSettlement
    // Tests` steps through it). Then the server answers a read of the article, so the write is
    // parked and the writes behind it that do not depend on it go.
    var syncs = [await cli.run(url, ["sync", "--json"], dataDir: a)]
    // A later edit of the article, made once the first was sent: it depends on it.
    let later = await cli.run(
      CLIFixture.deadURL, ["articles", "edit", id, "--title", "second edit"], dataDir: a)
    try #require(later.code == 0, "\(later.output.stderr)")
    while syncs.last?.lines.first?["parked"] as? Int != 1 && syncs.count < 3 {
      syncs.append(await cli.run(url, ["sync", "--json"], dataDir: a))
    }
    for early in syncs.dropLast() {
      #expect(early.code == 69, "\(early.output.stdout)")
      #expect(early.lines.first?["sent"] as? Int == 0, "\(early.output.stdout)")
    }
    let sync = try #require(syncs.last)
    #expect(sync.code == 76, "\(sync.output.stdout)\(sync.output.stderr)")
    #expect(sync.lines.first?["parked"] as? Int == 1 && sync.lines.first?["sent"] as? Int == 1)
    #expect(try await serverTitles(backend).values.contains("other"))
    let outbox = try await cli.outbox(url, dataDir: a)
    #expect(outbox["parked"] as? Int == 1 && outbox["pending"] as? Int == 1)
    let entries = try #require(outbox["entries"] as? [[String: Any]])
    let parked = try #require(entries.first { $0["state"] as? String == "parked" })
    #expect(parked["code"] as? String == "network_login_required")
    #expect(parked["attempts"] as? Int == 3)
    #expect((parked["message"] as? String)?.contains("never proved") == true)
    let held = try #require(entries.first { $0["state"] as? String == "pending" })
    #expect(
      held["waits"] as? String == "held" && held["waits_for"] as? Int == parked["sequence"] as? Int)
    let text = await cli.run(url, ["outbox"], dataDir: a)
    #expect(text.output.stdout.contains("parked: "), "\(text.output.stdout)")
    #expect(text.output.stdout.contains("courier outbox retry"), "\(text.output.stdout)")

    // The page goes away; a retry sends the parked write under its own key, then the one held.
    try await backend.call("POST", "/__chaos", json: "{}")
    let sequence = try #require(parked["sequence"] as? Int)
    let retry = await cli.run(url, ["outbox", "retry", String(sequence)], dataDir: a)
    #expect(retry.code == 0, "\(retry.output.stdout)\(retry.output.stderr)")
    #expect(try await serverTitles(backend)[id] == "second edit")
    #expect((try await cli.outbox(url, dataDir: a)["entries"] as? [Any])?.isEmpty == true)
    // The edits' keys (the article's creation aside): every send of the parked write, the
    // retry's too, under one key; then the one it held.
    let keys = try await backend.log().filter {
      $0["method"] as? String == "PUT" && ($0["path"] as? String)?.hasSuffix(id) == true
    }.compactMap { $0["idempotency_key"] as? String }.dropFirst()
    #expect(keys.count >= 3 && Set(keys.dropLast()).count == 1, "\(keys)")
    #expect(keys.last != keys.first, "\(keys)")
  }
}
