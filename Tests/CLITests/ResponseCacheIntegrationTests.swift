import CourierCLITestSupport
import CourierCore
import CourierCurl
import CourierDomain
import CourierLinux
import CourierPorts
import CourierSQLite
import CourierTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The response cache in the pipeline against real servers: the reference backend (`GET
/// /articles` has an `ETag` and answers 304 to `If-None-Match`), loopback servers for the header
/// cases, and `courier get` as a process of its own after the backend stopped.
@Suite("Response cache against real servers", .serialized, .sharedBackend)
struct ResponseCacheIntegrationTests {
  let cli = CLIFixture("courier-cache")

  /// The base transport with a count of what the server sent: body bytes and statuses.
  final class Counting: Transport {
    let base: any Transport
    let bodyBytes = Mutex(0)
    let statuses = Mutex<[Int]>([])
    init(_ base: any Transport) { self.base = base }
    func send(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions) async throws
      -> (HTTPResponse, ResponseBody)
    {
      let reply = try await base.send(request, body: body, options: options)
      bodyBytes.withLock { $0 += reply.1.bytes.count }
      statuses.withLock { $0.append(reply.0.status.code) }
      return reply
    }
  }

  /// A settable wall clock.
  final class Clock: Sendable {
    let now = Mutex(Date())
    func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
  }

  static func environment(
    _ baseURL: URL, _ dir: URL, transport: any Transport, token: String? = nil
  ) throws -> CourierEnvironment {
    var config = CourierConfig(environment: ["HOME": dir.path])
    config.baseURL = baseURL
    config.dataDirectory = dir.appendingPathComponent("data")
    config.pathMonitor = .manual
    config.retry.maxAttempts = 1
    config.token = token
    return try CourierEnvironment(config: config, overrides: AdapterOverrides(transport: transport))
  }

  static func client(
    _ environment: CourierEnvironment, clock: Clock, partition: String = "p"
  ) throws -> (APIClient, SQLiteResponseCache) {
    let cache = try environment.openResponseCache(warn: { _ in })
    let middleware = CachingMiddleware(
      store: cache, partition: { partition }, now: { clock.now.withLock { $0 } })
    return (environment.client(caching: middleware), cache)
  }

  @Test(
    "a stale entry is revalidated: the backend answers 304, no body crosses, the caller gets the stored body"
  )
  func revalidates() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let token = try await CLIFixture.token(backend)
    let created = try await backend.call(
      "POST", "/articles", json: #"{"id":"cached-1","title":"cached","body":"x"}"#,
      headers: ["Authorization": "Bearer \(token)"])
    #expect(created.status == 201)
    let counting = Counting(CurlTransport())
    let environment = try Self.environment(backend.url, dir, transport: counting, token: token)
    let clock = Clock()
    let (client, cache) = try Self.client(environment, clock: clock)

    let first = try await client.exchange(try client.request(.get, "/articles"))
    let firstBytes = counting.bodyBytes.withLock { $0 }
    #expect(first.response.status == .ok)
    #expect(firstBytes > 0 && firstBytes == first.body.bytes.count)
    #expect(first.response.headerFields[.courierCache] == nil)
    #expect(String(decoding: first.body.bytes, as: UTF8.self).contains("\"cached\""))
    #expect(try cache.allEntries().count == 1)

    // Within max-age=5: answered from the store, nothing sent.
    let hit = try await client.exchange(try client.request(.get, "/articles"))
    #expect(hit.response.headerFields[.courierCache] == "hit")
    #expect(hit.body.bytes == first.body.bytes)
    #expect(counting.statuses.withLock { $0 } == [200])

    // Stale: revalidated with If-None-Match; the 304 carries no body.
    clock.advance(10)
    let again = try await client.exchange(try client.request(.get, "/articles"))
    #expect(counting.statuses.withLock { $0 } == [200, 304])
    #expect(counting.bodyBytes.withLock { $0 } == firstBytes, "the 304 carried a body")
    #expect(again.response.status == .ok)
    #expect(again.response.headerFields[.courierCache] == "revalidated")
    #expect(again.body.bytes == first.body.bytes)
    let log = try await backend.log().filter { ($0["path"] as? String) == "/articles" }
    #expect(log.suffix(2).compactMap { $0["status"] as? Int } == [200, 304])
    // The 304 refreshed the entry: fresh again for max-age.
    let entry = try #require(try cache.allEntries().first)
    #expect(entry.storedAt == clock.now.withLock { $0 })
  }

  @Test("a write to the URL removes its entry; a changed list is fetched whole")
  func writeInvalidates() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let token = try await CLIFixture.token(backend)
    let environment = try Self.environment(
      backend.url, dir, transport: CurlTransport(), token: token)
    let (client, cache) = try Self.client(environment, clock: Clock())
    _ = try await client.exchange(try client.request(.get, "/articles"))
    #expect(try cache.allEntries().count == 1)
    var post = try client.request(.post, "/articles")
    post.headerFields[.contentType] = "application/json"
    _ = try await client.exchange(
      post, body: .bytes(Data(#"{"id":"new-1","title":"new","body":"y"}"#.utf8)))
    #expect(try cache.allEntries().isEmpty)
    let list = try await client.exchange(try client.request(.get, "/articles"))
    #expect(list.response.headerFields[.courierCache] == nil)
    #expect(String(decoding: list.body.bytes, as: UTF8.self).contains("\"new\""))
  }

  /// A loopback server answering each request with `reply(head)`, counting the bytes it sent.
  final class Scripted: Sendable {
    /// A count shared with the server's thread.
    final class Count: Sendable {
      let value = Mutex(0)
      func add(_ more: Int) { value.withLock { $0 += more } }
      var current: Int { value.withLock { $0 } }
    }
    let server: LoopbackServer
    let sent = Count()
    let bodyBytes = Count()
    init(_ reply: @escaping @Sendable (String) -> (status: String, fields: [String], body: String))
      throws
    {
      let sent = self.sent
      let bodyBytes = self.bodyBytes
      server = try LoopbackServer(
        .echo { head in
          let (status, fields, body) = reply(head.lowercased())
          let text =
            "HTTP/1.1 \(status)\r\n" + fields.map { $0 + "\r\n" }.joined()
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
          sent.add(text.utf8.count)
          bodyBytes.add(body.utf8.count)
          return text
        })
    }
  }

  static func loopbackClient(_ server: LoopbackServer, _ dir: URL, clock: Clock = Clock())
    throws -> (APIClient, SQLiteResponseCache)
  {
    try client(environment(server.url, dir, transport: CurlTransport()), clock: clock)
  }

  static func get(_ client: APIClient, _ path: String, _ fields: [(HTTPField.Name, String)] = [])
    async throws -> APIClient.Reply
  {
    var request = try client.request(.get, path)
    for (name, value) in fields { request.headerFields[name] = value }
    return try await client.exchange(request)
  }

  @Test("no-store (reply or request), Vary: * and a portal's page are never stored")
  func neverStored() async throws {
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let scripted = try Scripted { head in
      switch true {
      case head.contains("get /no-store "):
        return ("200 OK", ["Cache-Control: no-store", "Content-Type: application/json"], "[1]")
      case head.contains("get /vary-star "):
        return ("200 OK", ["Vary: *", "Content-Type: application/json"], "[2]")
      case head.contains("get /portal "):
        return ("200 OK", ["Content-Type: text/html"], "<html>Log in to the Wi-Fi</html>")
      default:
        return ("200 OK", ["Cache-Control: max-age=60", "Content-Type: application/json"], "[3]")
      }
    }
    defer { scripted.server.stop() }
    let (client, cache) = try Self.loopbackClient(scripted.server, dir)
    _ = try await Self.get(client, "/no-store")
    _ = try await Self.get(client, "/vary-star")
    _ = try await Self.get(client, "/portal")
    _ = try await Self.get(client, "/asked-no-store", [(.cacheControl, "no-store")])
    #expect(try cache.allEntries().isEmpty)
    _ = try await Self.get(client, "/plain")
    #expect(try cache.allEntries().map { URL(string: $0.url)?.path } == ["/plain"])
  }

  @Test("Vary: a stored reply answers only a request with the same values of the named fields")
  func vary() async throws {
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let scripted = try Scripted { head in
      let french = head.contains("accept-language: fr")
      return (
        "200 OK",
        ["Cache-Control: max-age=60", "Vary: Accept-Language", "Content-Type: application/json"],
        french ? #"["bonjour"]"# : #"["hello"]"#
      )
    }
    defer { scripted.server.stop() }
    let (client, cache) = try Self.loopbackClient(scripted.server, dir)
    let fr = try await Self.get(client, "/greeting", [(.acceptLanguage, "fr")])
    let en = try await Self.get(client, "/greeting", [(.acceptLanguage, "en")])
    #expect(String(decoding: fr.body.bytes, as: UTF8.self) == #"["bonjour"]"#)
    #expect(String(decoding: en.body.bytes, as: UTF8.self) == #"["hello"]"#)
    #expect(en.response.headerFields[.courierCache] == nil)
    #expect(try cache.allEntries().count == 2)
    let frAgain = try await Self.get(client, "/greeting", [(.acceptLanguage, "fr")])
    #expect(frAgain.response.headerFields[.courierCache] == "hit")
    #expect(frAgain.body.bytes == fr.body.bytes)
    #expect(scripted.server.requestHeads.count == 2)
  }

  @Test("Last-Modified alone: revalidated with If-Modified-Since; the 304 sends no body")
  func lastModified() async throws {
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let date = "Sun, 06 Nov 1994 08:49:37 GMT"
    let scripted = try Scripted { head in
      if head.contains("if-modified-since: \(date.lowercased())") {
        return ("304 Not Modified", ["Cache-Control: no-cache"], "")
      }
      return (
        "200 OK", ["Last-Modified: \(date)", "Content-Type: application/json"], #"{"big":true}"#
      )
    }
    defer { scripted.server.stop() }
    let (client, _) = try Self.loopbackClient(scripted.server, dir)
    let first = try await Self.get(client, "/doc")
    let bodyAfterFirst = scripted.bodyBytes.current
    let second = try await Self.get(client, "/doc")
    #expect(second.response.headerFields[.courierCache] == "revalidated")
    #expect(second.body.bytes == first.body.bytes)
    #expect(scripted.bodyBytes.current == bodyAfterFirst)
    #expect(scripted.server.requestHeads.last?.contains("if-modified-since:") == true)
    #expect(scripted.server.requestHeads.last?.contains("if-none-match:") == false)
  }

  @Test("offline: the last good body, marked stale with its age; nothing stored answers nothing")
  func offline() async throws {
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let scripted = try Scripted { _ in
      ("200 OK", ["ETag: \"1\"", "Content-Type: application/json"], #"{"v":1}"#)
    }
    let clock = Clock()
    let (client, _) = try Self.loopbackClient(scripted.server, dir, clock: clock)
    let first = try await Self.get(client, "/thing")
    scripted.server.stop()
    clock.advance(180)
    let stale = try await Self.get(client, "/thing")
    #expect(stale.body.bytes == first.body.bytes)
    #expect(stale.response.headerFields[.courierCache] == "stale")
    #expect(stale.response.headerFields[.age] == "180")
    await #expect(throws: CourierError.self) { try await Self.get(client, "/other") }
  }

  @Test("partitions: one identity's body is never another's; a login empties the cache")
  func partitions() async throws {
    let backend = try await SharedBackend.fresh()
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let scripted = try Scripted { head in
      let who = head.contains("authorization: bearer alice-token") ? "alice" : "bob"
      // The same for everyone, and said so: it outlives a login (decision 2505).
      let shared = head.hasPrefix("get /shared ")
      return (
        "200 OK",
        ["Cache-Control: \(shared ? "public, " : "")max-age=60", "Content-Type: application/json"],
        shared ? "[\"everyone\"]" : "[\"\(who)\"]"
      )
    }
    defer { scripted.server.stop() }
    let clock = Clock()
    let alice = try Self.environment(
      scripted.server.url, dir, transport: CurlTransport(), token: "alice-token")
    let bob = try Self.environment(
      scripted.server.url, dir, transport: CurlTransport(), token: "bob-token")
    #expect(alice.responseCachePartition != bob.responseCachePartition)
    let (aliceClient, cache) = try Self.client(
      alice, clock: clock, partition: alice.responseCachePartition)
    let (bobClient, _) = try Self.client(bob, clock: clock, partition: bob.responseCachePartition)
    let a = try await Self.get(aliceClient, "/me")
    let b = try await Self.get(bobClient, "/me")
    #expect(String(decoding: a.body.bytes, as: UTF8.self) == #"["alice"]"#)
    #expect(String(decoding: b.body.bytes, as: UTF8.self) == #"["bob"]"#)
    #expect(b.response.headerFields[.courierCache] == nil)
    _ = try await Self.get(aliceClient, "/shared")
    #expect(try cache.allEntries().count == 3)
    // A pin keeps a private reply from eviction, not from the next identity.
    for entry in try cache.allEntries() where entry.partition == alice.responseCachePartition {
      try cache.setPinned(true, partition: entry.partition, url: entry.url)
    }
    let shared = try #require(try cache.allEntries().first { $0.url.hasSuffix("/shared") })

    // A signed-in session: a login (and a logout) empties the cache of the folder, but for the
    // replies the server marked public.
    let session = try CourierSession(
      environment: Self.environment(backend.url, dir, transport: CurlTransport()))
    try await session.login(username: "alice", password: "secret")
    #expect(try cache.allEntries().map(\.id) == [shared.id])
    try session.logout()
    let kept = try #require(try cache.allEntries().first)
    #expect(kept.pinned)
    #expect(String(decoding: try cache.body(of: kept), as: UTF8.self) == #"["everyone"]"#)
  }
}

/// `courier get` as a person runs it: a process of its own, against a backend that then stops.
@Suite("courier get offline", .serialized)
struct GetOfflineProcessTests {
  let cli = CLIFixture("courier-get-offline")

  @Test("after the backend stops, courier get prints the last good body and says how old it is")
  func lastGoodBody() async throws {
    let backend = try await ReferenceBackend()
    var stopped = false
    defer { if !stopped { backend.stop() } }
    let dir = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    try await cli.login(backend.url.absoluteString, dataDir: dir)
    let token = try await CLIFixture.token(backend)
    let created = try await backend.call(
      "POST", "/articles", json: #"{"id":"offline-1","title":"kept offline","body":"x"}"#,
      headers: ["Authorization": "Bearer \(token)"])

    #expect(created.status == 201)
    // An article's own URL has an ETag and no max-age: each get online revalidates, and the
    // stored copy is never fresh on its own, so offline it is answered as stale.
    let path = "/articles/offline-1"
    let online = try await cli.runProcess(backend, ["get", path], dataDir: dir)
    #expect(online.succeeded, "\(online)")
    #expect(online.stdout.contains("kept offline"), "\(online.stdout)")
    #expect(!online.stderr.contains("Offline"))
    let onlineJSON = try await cli.runProcess(backend, ["get", path, "--json"], dataDir: dir)
    #expect(onlineJSON.succeeded, "\(onlineJSON)")
    #expect(!onlineJSON.stdout.contains("\"cache\""))
    // Online, the second get revalidated: the backend answered 304, and the body printed is
    // the stored one.
    let log = try await backend.log().filter { ($0["path"] as? String) == path }
    #expect(log.compactMap { $0["status"] as? Int } == [200, 304])

    backend.stop()
    stopped = true
    // Stopping is asynchronous: wait until the port refuses (bounded).
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline, (try? await backend.call("GET", "/health")) != nil {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect((try? await backend.call("GET", "/health")) == nil, "the backend did not stop")
    let offline = try await cli.runProcess(backend, ["get", path], dataDir: dir)
    #expect(offline.succeeded, "\(offline)")
    #expect(offline.stdout == online.stdout)
    #expect(
      offline.stderr.contains(/Offline: showing the copy from (just now|\d+ seconds? ago)\./),
      "\(offline.stderr)")
    let json = try await cli.runProcess(backend, ["get", path, "--json"], dataDir: dir)
    #expect(json.succeeded, "\(json)")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect(object["cache"] as? String == "stale")
    #expect((object["age_seconds"] as? Int).map { $0 >= 0 } == true)
    #expect(object["http_status"] as? Int == 200)
    let onlineObject = try #require(
      try JSONSerialization.jsonObject(with: Data(onlineJSON.stdout.utf8)) as? [String: Any])
    let body = try #require(object["body"] as? [String: Any])
    #expect(body["title"] as? String == "kept offline")
    let onlineBody = onlineObject["body"] as? [String: Any]
    let versions = (body["version"] as? Int, onlineBody?["version"] as? Int)
    #expect(versions.0 != nil && versions.0 == versions.1, "\(onlineJSON)\n\(json)")
    #expect(json.stderr.isEmpty, "\(json.stderr)")

    // Never fetched: the offline failure, as before.
    let never = try await cli.runProcess(backend, ["get", "/health"], dataDir: dir)
    #expect(!never.succeeded)
  }
}
