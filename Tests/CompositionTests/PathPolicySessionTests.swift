import CourierCore
import CourierDomain
import CourierTestKit
import CourierTestSupport
import Foundation
import Testing

@testable import CourierLinux

/// The path policy end to end (decision 2610): the reference backend, the SQLite outbox, a
/// session whose path a `ManualPathMonitor` drives (the metered fact comes from whichever
/// source feeds the path: the gating reads only `NetworkPath`).
@Suite("Path policy against the reference backend", .sharedBackend, .serialized)
struct PathPolicySessionTests {
  func temporaryDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-policy-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
  }

  /// Waits (bounded, 60 s) until `condition` holds, polling an observable state.
  func until(_ what: String, _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while try !condition() {
      guard ContinuousClock.now < deadline else {
        Issue.record("timed out waiting for \(what)")
        return
      }
      try await Task.sleep(for: .milliseconds(20))
    }
  }

  /// The writes the backend received, as `METHOD /path`, logins and reads left out.
  func writes(_ backend: ReferenceBackend) async throws -> [String] {
    try await backend.log().compactMap { entry -> String? in
      guard let method = entry["method"] as? String, let path = entry["path"] as? String,
        method != "GET", method != "HEAD", method != "OPTIONS", !path.hasPrefix("/auth")
      else { return nil }
      return "\(method) \(path)"
    }
  }

  @Test(
    "a 5 MiB queued upload waits on a metered path and goes when it turns unmetered; an article and an upload allowed on it go at once"
  )
  func meteredPath() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let monitor = ManualPathMonitor()
    var config = CourierConfig(environment: ["HOME": dir.path])
    config.baseURL = backend.url
    config.dataDirectory = dir.appendingPathComponent("data")
    let courier = try CourierSession(
      config: config, overrides: AdapterOverrides(pathMonitor: monitor))
    try await courier.login(username: "alice", password: "secret")
    // Images of noise (the server takes images only), sent as they are: 6.5 MB and 2.9 MB.
    let big = dir.appendingPathComponent("big.png")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "1800x1800", "xc:gray", "+noise", "Random", big.path])
    let small = dir.appendingPathComponent("small.png")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "1200x1200", "xc:gray", "+noise", "Random", small.path])
    let bigSize = try #require(
      try FileManager.default.attributesOfItem(atPath: big.path)[.size] as? Int)
    try #require(bigSize >= 5 << 20, "a 5 MiB upload")
    monitor.send(.satisfied, expensive: true)

    let held = try await courier.queuedUploads.add(
      big, title: "big", resumable: false, compress: false)
    let allowed = try await courier.queuedUploads.add(
      small, title: "allowed", resumable: false, compress: false,
      allowsExpensiveNetworkAccess: true)
    let outbox = try courier.outbox()
    #expect(outbox.replayer.pathWait(for: held) == .expensive)
    #expect(outbox.replayer.pathWait(for: allowed) == nil)

    let watching = Task { for try await _ in courier.watch() {} }
    defer { watching.cancel() }
    let article = try await courier.collections.articles().add(title: "sent at once")
    try await until("the article and the allowed upload to be delivered") {
      try outbox.entries().map(\.id) == [held.id]
    }
    // The held upload was never handed to the network: no attempt, no bytes at the server.
    let waiting = try #require(try outbox.entries().first)
    #expect(waiting.attempts == 0 && waiting.state.isPending)
    let sent = try await writes(backend)
    #expect(sent.contains("PUT /articles/\(article.key.id)"), "\(sent)")
    #expect(sent.filter { $0 == "POST /photos" }.count == 1, "\(sent)")
    #expect(
      OutboxWait.of(try outbox.entries()) { outbox.replayer.pathWait(for: $0) }
        == [.path(.expensive)])

    // Unmetered now: the change alone starts the pass that sends it.
    monitor.send(.satisfied, expensive: false)
    try await until("the held upload to be delivered") { try outbox.entries().isEmpty }
    #expect(try await writes(backend).filter { $0 == "POST /photos" }.count == 2)
  }

  @Test(
    "a large photo a stored article names is not downloaded for offline reading on a metered path (its HEAD only); it is once unmetered"
  )
  func offlinePhotosWaitOnMeteredPath() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let monitor = ManualPathMonitor()
    var config = CourierConfig(environment: ["HOME": dir.path])
    config.baseURL = backend.url
    config.dataDirectory = dir.appendingPathComponent("data")
    config.offlineArticlePhotos = true
    let courier = try CourierSession(
      config: config, overrides: AdapterOverrides(pathMonitor: monitor))
    try await courier.login(username: "alice", password: "secret")
    // A 3 MB photo on the server and an article naming it, made by someone else.
    let placed = try await backend.call(
      "POST", "/__photos", json: #"{"id":"big","size":3000000,"owner":"alice"}"#)
    try #require(placed.status == 201, "\(String(decoding: placed.body, as: UTF8.self))")
    let (_, login) = try await backend.call(
      "POST", "/auth/token", json: #"{"username":"alice","password":"secret"}"#)
    let token = try #require(
      (try JSONSerialization.jsonObject(with: login) as? [String: Any])?["access_token"]
        as? String)
    let created = try await backend.call(
      "POST", "/articles", json: #"{"id":"a-big","title":"big","body":"","photo":"big"}"#,
      headers: ["Authorization": "Bearer \(token)"])
    try #require(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
    monitor.send(.satisfied, expensive: true)
    let articles = try courier.collections.articles()
    _ = await articles.refresh()
    try #require(try articles.stored(id: "a-big") != nil)

    let url = backend.url.absoluteString + "/photos/big"
    let held = await courier.offlineAttachments.fetch()
    #expect(held.held[url] == PathPolicy.Wait.expensive.sentence, "\(held)")
    #expect(held.downloaded.isEmpty && held.failed.isEmpty, "\(held)")
    let served = { () async throws -> [String] in
      let (_, body) = try await backend.call("GET", "/__photos/served")
      let list = try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
      return list.filter { $0["id"] as? String == "big" }.compactMap { $0["method"] as? String }
    }
    #expect(try await served() == ["HEAD"])

    monitor.send(.satisfied, expensive: false)
    let fetched = await courier.offlineAttachments.fetch()
    #expect(fetched.downloaded == [url], "\(fetched)")
    #expect(try await served() == ["HEAD", "HEAD", "GET"])
  }
}
