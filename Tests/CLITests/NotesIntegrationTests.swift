import CourierCLI
import CourierCLITestSupport
import CourierLinux
import CourierTestSupport
import Foundation
import Testing

/// A declared collection, `notes` (other field names, `"r<n>"` tags: Docs/notes.md), through
/// `courier records` against the real reference backend: the declaration comes from each client's
/// config file, and the writes share the outbox, the sync lock and the replays with articles.
@Suite(
  "Records of a declared collection against the reference backend", .serialized, .sharedBackend)
struct NotesIntegrationTests {
  /// The declaration, as a user writes it in the config file (each client's
  /// `$XDG_CONFIG_HOME/courier/config.json`).
  static let config = """
    {"collections": {"notes": {"id": "note_id", "version": "rev", "updated_at": "modified_at",
     "fields": {"text": "string", "tags": "strings"}, "required": ["text"],
     "version_tag": "r"}}}
    """

  let cli = CLIFixture("courier-notes", globalFlags: ["--max-attempts", "1"], config: Self.config)

  func serverNotes(_ backend: ReferenceBackend) async throws -> [[String: Any]] {
    try await CLIFixture.serverList("/notes", on: backend)
  }

  func records(_ run: CLIRun) -> [[String: Any]] {
    (run.lines.last?["records"] as? [[String: Any]]) ?? []
  }

  @Test(
    "add offline, sync with articles in outbox order, list cache then network, show, edit, delete")
  func lifecycle() async throws {
    let backend = try await SharedBackend.fresh()
    let url = backend.url.absoluteString
    let dir = try await cli.client(url)
    defer { try? FileManager.default.removeItem(at: dir) }

    // Offline: a note, an article, another note, in that order.
    let first = await cli.run(
      CLIFixture.deadURL,
      ["records", "notes", "add", "--field", "text=first", "--field", "tags=a, b", "--json"],
      dataDir: dir)
    #expect(first.code == 0, "\(first.output.stderr)")
    let firstID = try #require(first.lines.first?["id"] as? String)
    #expect(first.lines.first?["collection"] as? String == "notes")
    let article = await cli.run(
      CLIFixture.deadURL, ["articles", "add", "--title", "between"], dataDir: dir)
    #expect(article.code == 0, "\(article.output.stderr)")
    let second = await cli.run(
      CLIFixture.deadURL,
      ["records", "add", "notes", "--data", #"{"text":"second","tags":["c"]}"#],
      dataDir: dir)
    #expect(second.code == 0, "\(second.output.stderr)")
    #expect(second.output.stdout.contains("saved in the outbox"))
    let outbox = await cli.run(CLIFixture.deadURL, ["outbox", "--json"], dataDir: dir)
    let queued = (outbox.lines.first?["entries"] as? [[String: Any]]) ?? []
    #expect(queued.compactMap { $0["collection"] as? String } == ["notes", "articles", "notes"])

    let sync = await cli.run(url, ["sync", "--json"], dataDir: dir)
    #expect(sync.code == 0, "\(sync.output.stdout)")
    #expect(sync.lines.first?["sent"] as? Int == 3 && sync.lines.first?["pending"] as? Int == 0)
    let puts = try await backend.log().filter { ($0["method"] as? String) == "PUT" }
    #expect(
      puts.compactMap { ($0["path"] as? String)?.split(separator: "/").first.map(String.init) }
        == ["notes", "articles", "notes"], "one outbox, in its order")
    let server = try await serverNotes(backend)
    #expect(server.count == 2)
    let stored = try #require(server.first { $0["note_id"] as? String == firstID })
    #expect(stored["text"] as? String == "first" && stored["tags"] as? [String] == ["a", "b"])
    #expect(stored["rev"] as? Int == 1)

    let listed = await cli.run(url, ["records", "notes", "list", "--json"], dataDir: dir)
    #expect(listed.code == 0, "\(listed.output.stderr)")
    #expect(listed.lines.count == 2)
    #expect(listed.lines.first?["source"] as? String == "cache")
    #expect(listed.lines.last?["source"] as? String == "network")
    let fresh = records(listed).first { $0["id"] as? String == firstID }
    #expect(fresh?["version"] as? Int == 1 && fresh?["state"] as? String == "synced")
    #expect((fresh?["fields"] as? [String: Any])?["tags"] as? [String] == ["a", "b"])
    let again = await cli.run(url, ["records", "list", "notes", "--json"], dataDir: dir)
    #expect(again.lines.last?["not_modified"] as? Bool == true, "the list's ETag is sent")

    let edited = await cli.run(
      url, ["records", "notes", "edit", firstID, "--field", "text=first, edited"], dataDir: dir)
    #expect(edited.code == 0, "\(edited.output.stderr)")
    #expect(edited.output.stdout.contains("Sent: the server has it."))
    let show = await cli.run(url, ["records", "notes", "show", firstID, "--json"], dataDir: dir)
    let shown = try #require(show.lines.first)
    #expect(shown["version"] as? Int == 2 && shown["state"] as? String == "synced")
    #expect((shown["fields"] as? [String: Any])?["text"] as? String == "first, edited")
    #expect((shown["fields"] as? [String: Any])?["tags"] as? [String] == ["a", "b"], "kept")
    let ifMatch = try await backend.log().last { ($0["method"] as? String) == "PUT" }
    #expect((ifMatch?["path"] as? String) == "/notes/\(firstID)")

    let deleted = await cli.run(url, ["records", "notes", "delete", firstID], dataDir: dir)
    #expect(deleted.code == 0, "\(deleted.output.stderr)")
    #expect(try await serverNotes(backend).count == 1)
    let gone = await cli.run(url, ["records", "notes", "show", firstID], dataDir: dir)
    #expect(gone.code == 66, "\(gone.output.stderr)")
  }

  @Test("fields that do not fit the declaration are refused before anything is queued")
  func badInput() async throws {
    let backend = try await SharedBackend.fresh()
    let url = backend.url.absoluteString
    let dir = try await cli.client(url)
    defer { try? FileManager.default.removeItem(at: dir) }
    let cases: [([String], String)] = [
      (["records", "notes", "add", "--field", "tags=a"], "text"),
      (["records", "notes", "add", "--field", "text=x", "--field", "title=t"], "title"),
      (["records", "notes", "add", "--data", #"{"text":3}"#], "text"),
      (["records", "notes", "add", "--data", "[1,2]"], "JSON object"),
      (["records", "notes", "add", "--data", #"{"text":"x","rev":3}"#], "rev"),
    ]
    for (arguments, mentioned) in cases {
      let refused = await cli.run(url, arguments, dataDir: dir)
      #expect(refused.code == 64, "\(arguments): \(refused.output.stderr)")
      #expect(refused.output.stderr.contains(mentioned), "\(arguments): \(refused.output.stderr)")
    }
    let unknown = await cli.run(url, ["records", "pages", "list"], dataDir: dir)
    #expect(unknown.code == 64 && unknown.output.stderr.contains("notes"))
    let outbox = await cli.run(url, ["outbox", "--json"], dataDir: dir)
    #expect((outbox.lines.first?["entries"] as? [Any])?.isEmpty == true, "nothing was queued")
    #expect(try await backend.log().filter { ($0["method"] as? String) == "PUT" }.isEmpty)
  }

  @Test(
    "text edited in one data folder, tags in another, both offline, merge: both reach the server")
  func mergeDifferentFields() async throws {
    let backend = try await SharedBackend.fresh()
    let url = backend.url.absoluteString
    let a = try await cli.client(url, user: "alice")
    let b = try await cli.client(url, user: "bob")
    defer { CLIFixture.remove(a, b) }
    let added = await cli.run(
      url, ["records", "notes", "add", "--field", "text=base", "--field", "tags=x", "--json"],
      dataDir: a)
    let id = try #require(added.lines.first?["id"] as? String)
    _ = await cli.run(url, ["records", "notes", "list"], dataDir: b)
    #expect(
      await cli.run(
        CLIFixture.deadURL, ["records", "notes", "edit", id, "--field", "text=A"], dataDir: a
      )
      .code == 0)
    #expect(
      await cli.run(
        CLIFixture.deadURL, ["records", "notes", "edit", id, "--field", "tags=x,y"], dataDir: b
      )
      .code == 0)
    let syncA = await cli.run(url, ["sync", "--json", "--conflict-policy", "merge"], dataDir: a)
    #expect(syncA.code == 0, "\(syncA.output.stdout)")
    let syncB = await cli.run(url, ["sync", "--json", "--conflict-policy", "merge"], dataDir: b)
    #expect(syncB.code == 0, "\(syncB.output.stdout)")
    #expect(syncB.lines.first?["conflicts"] as? Int == 1)
    let note = try #require(try await serverNotes(backend).first)
    #expect(note["text"] as? String == "A" && note["tags"] as? [String] == ["x", "y"])
    #expect(note["rev"] as? Int == 3)
    // The stale edit was sent with the notes' own tag, and the merge on the new one.
    let matches = try await backend.log().filter { ($0["method"] as? String) == "PUT" }
    #expect(matches.count == 4, "create, A's edit, B's stale edit, B's merge")
    let listedB = await cli.run(url, ["records", "notes", "list", "--json"], dataDir: b)
    let seen = records(listedB).first
    #expect((seen?["fields"] as? [String: Any])?["text"] as? String == "A")
  }
}
