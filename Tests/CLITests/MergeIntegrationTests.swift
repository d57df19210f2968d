import CourierCLI
import CourierCLITestSupport
import CourierLinux
import CourierTestSupport
import Foundation
import Testing

/// The merge policy through the CLI against the real reference backend: two data directories
/// edit different fields of one article offline and both edits reach the server.
@Suite("Merge policy against the reference backend", .serialized, .sharedBackend)
struct MergeIntegrationTests {
  let cli = CLIFixture("courier-merge", globalFlags: ["--max-attempts", "1"])

  func article(_ run: CLIRun) -> [String: Any]? {
    (run.lines.last?["articles"] as? [[String: Any]])?.first
  }

  @Test("title edited in one data directory, body in another, both offline: both reach the server")
  func differentFields() async throws {
    let backend = try await SharedBackend.fresh()
    let url = backend.url.absoluteString
    let a = try await cli.client(url, user: "alice")
    let b = try await cli.client(url, user: "bob")
    defer { CLIFixture.remove(a, b) }
    let merge = ["COURIER_CONFLICT_POLICY": "merge"]
    let added = await cli.run(
      url, ["articles", "add", "--title", "base", "--body", "text"], dataDir: a)
    try #require(added.code == 0, "\(added.output.stderr)")
    let listed = await cli.run(url, ["articles", "list", "--json"], dataDir: b)
    let id = try #require(article(listed)?["id"] as? String)
    _ = await cli.run(url, ["articles", "list"], dataDir: a)

    // Both edit offline, each a different field of the same version.
    let editA = await cli.run(
      CLIFixture.deadURL, ["articles", "edit", id, "--title", "A's title"], dataDir: a)
    #expect(editA.code == 0, "\(editA.output.stderr)")
    let editB = await cli.run(
      CLIFixture.deadURL, ["articles", "edit", id, "--body", "B's body"], dataDir: b)
    #expect(editB.code == 0, "\(editB.output.stderr)")

    let syncA = await cli.run(url, ["sync", "--json"], dataDir: a, environment: merge)
    #expect(syncA.code == 0, "\(syncA.output.stdout)\(syncA.output.stderr)")
    #expect(syncA.lines.first?["conflicts"] as? Int == 0)
    let syncB = await cli.run(url, ["sync", "--json"], dataDir: b, environment: merge)
    #expect(syncB.code == 0, "\(syncB.output.stdout)\(syncB.output.stderr)")
    #expect(syncB.lines.first?["conflicts"] as? Int == 1)
    #expect(syncB.lines.first?["pending"] as? Int == 0)

    let server = try #require(
      try await CLIFixture.articles(backend).first { $0["id"] as? String == id })
    #expect(server["title"] as? String == "A's title")
    #expect(server["body"] as? String == "B's body")
    // Both data directories see both edits.
    for dir in [a, b] {
      let shown = article(await cli.run(url, ["articles", "list", "--json"], dataDir: dir))
      #expect(shown?["title"] as? String == "A's title")
      #expect(shown?["body"] as? String == "B's body")
    }
  }
}
