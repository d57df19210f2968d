import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierLinux
import CourierTestSupport
import Foundation
import Testing

/// A record's JSON goes through `courier` unchanged where `courier` does not edit it (decision
/// 2428): a field nested 2,000 levels deep and an integer beyond 64 bits, listed from the
/// reference backend, cached, another field edited and synced, are what the server still holds,
/// digit for digit (the backend keeps integers exactly and fractions as doubles, so the deep
/// field ends in an integer). The lines are read with Courier's own parser: Foundation's stops
/// at 512 levels.
@Suite("Exact JSON through courier records", .serialized, .sharedBackend)
struct ExactJSONIntegrationTests {
  /// The backend's free-form collection, declared with the fields the test edits and keeps.
  static let config = """
    {"collections": {"documents": {"fields": {"title": "string", "meta": "json",
     "big": "integer", "ratio": "number"}}}}
    """

  let cli = CLIFixture("courier-exact", globalFlags: ["--max-attempts", "1"], config: Self.config)

  static let big = "18446744073709551617"
  static let deep =
    String(repeating: #"{"a":["#, count: 1_000) + "-123456789012345678901234567890"
    + String(repeating: "]}", count: 1_000)

  /// The server's copy of a document, as it sends it.
  func serverText(_ backend: ReferenceBackend, _ id: String) async throws -> String {
    let bearer = try await CLIFixture.token(backend)
    let (status, body) = try await backend.call(
      "GET", "/documents/\(id)", headers: ["Authorization": "Bearer \(bearer)"])
    try #require(status == 200, "GET /documents/\(id): \(status)")
    return String(decoding: body, as: UTF8.self)
  }

  @Test("a 2,000-level field and an integer past 64 bits survive list, edit and sync exactly")
  func listEditSync() async throws {
    let backend = try await SharedBackend.fresh()
    let url = backend.url.absoluteString
    let dir = try await cli.client(url)
    defer { CLIFixture.remove(dir) }
    let bearer = try await CLIFixture.token(backend)
    let id = "doc-1"
    let created = try await backend.call(
      "PUT", "/documents/\(id)",
      json: #"{"big":\#(Self.big),"meta":\#(Self.deep),"ratio":1e-07,"title":"First"}"#,
      headers: ["Authorization": "Bearer \(bearer)"])
    #expect(created.status == 201, "\(String(decoding: created.body.prefix(300), as: UTF8.self))")

    // Listed from the network and cached, every digit and level.
    let listed = await cli.run(url, ["records", "documents", "list", "--json"], dataDir: dir)
    #expect(listed.code == 0, "\(listed.output.stderr)")
    let network = try JSONValue(
      parsing: String(listed.output.stdout.split(separator: "\n").last ?? ""))
    #expect(network["source"] == .string("network"))
    guard case .array(let records)? = network["records"], let record = records.first else {
      Issue.record("no records: \(listed.output.stdout.prefix(300))")
      return
    }
    let meta = record["fields"]?["meta"]?.jsonText == Self.deep
    #expect(meta, "the listed field")
    #expect(record["fields"]?["big"]?.jsonText == Self.big)
    #expect(record["fields"]?["ratio"]?.jsonText == "1e-07")
    let text = await cli.run(url, ["records", "documents", "list", "--offline"], dataDir: dir)
    #expect(text.code == 0 && text.output.stdout.contains(#""big":\#(Self.big)"#))

    // Another field edited: sent with the rest as it came.
    let edited = await cli.run(
      url, ["records", "documents", "edit", id, "--field", "title=Edited"], dataDir: dir)
    #expect(edited.code == 0, "\(edited.output.stderr)")
    #expect(edited.output.stdout.contains("Sent: the server has it."), "\(edited.output.stdout)")
    let sync = await cli.run(url, ["sync", "--json"], dataDir: dir)
    #expect(sync.code == 0 && sync.lines.first?["pending"] as? Int == 0, "\(sync.output.stdout)")

    let server = try JSONValue(parsing: try await serverText(backend, id))
    #expect(server["title"] == .string("Edited") && server["version"] == .integer(2))
    let kept = server["meta"]?.jsonText == Self.deep
    #expect(kept, "the server's field after the edit")
    #expect(server["big"]?.jsonText == Self.big)
    #expect(server["ratio"]?.jsonText == "1e-07")
    // What the PUT carried is what the server stores: nothing else was sent.
    let shown = await cli.run(url, ["records", "documents", "show", id, "--json"], dataDir: dir)
    let cached = try JSONValue(parsing: shown.output.stdout)
    let same = cached["fields"] == server.removing(["id", "version", "updated_at"])
    #expect(same, "the cache after the sync")
    #expect(cached["version"] == .integer(2) && cached["state"] == .string("synced"))
  }
}

extension JSONValue {
  /// The object without some members.
  func removing(_ names: [String]) -> JSONValue {
    guard case .object(var members) = self else { return self }
    for name in names { members[name] = nil }
    return .object(members)
  }
}
