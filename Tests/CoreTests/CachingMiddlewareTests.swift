import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The caching middleware over a fake store and a scripted transport: which failures answer
/// the stored body, revalidation, and what passes through untouched.
@Suite("CachingMiddleware")
struct CachingMiddlewareTests {
  /// A store in memory.
  final class MemoryStore: ResponseCacheStore {
    let state = Mutex<(entries: [CachedResponse], bodies: [Int64: Data], next: Int64)>(
      ([], [:], 1))
    func entries(partition: String, url: String) throws -> [CachedResponse] {
      state.withLock { $0.entries.filter { $0.partition == partition && $0.url == url } }
    }
    func body(of entry: CachedResponse) throws -> Data {
      guard let body = state.withLock({ $0.bodies[entry.id] }) else {
        throw StoreError(.notFound, "gone")
      }
      return body
    }
    func store(
      partition: String, url: String, varyValues: [String: String], status: Int,
      fields: HTTPFields, body: Data, now: Date
    ) throws -> CachedResponse {
      state.withLock { state in
        state.entries.removeAll {
          $0.partition == partition && $0.url == url && $0.varyValues == varyValues
        }
        let entry = CachedResponse(
          id: state.next, partition: partition, url: url, varyValues: varyValues, status: status,
          fields: fields, size: body.count, storedAt: now, lastUsed: now, pinned: false)
        state.next += 1
        state.entries.append(entry)
        state.bodies[entry.id] = body
        return entry
      }
    }
    func refresh(_ entry: CachedResponse, fields: HTTPFields, now: Date) throws {
      state.withLock { state in
        guard let index = state.entries.firstIndex(where: { $0.id == entry.id }) else { return }
        state.entries[index].fields = fields
        state.entries[index].storedAt = now
      }
    }
    func touch(_ entry: CachedResponse, now: Date) throws {}
    func invalidate(partition: String, url: String) throws {
      state.withLock { $0.entries.removeAll { $0.partition == partition && $0.url == url } }
    }
    var count: Int { state.withLock { $0.entries.count } }
  }

  static let start = Date(timeIntervalSince1970: 1_800_000_000)

  /// The middleware over `transport`, its clock `seconds` after `start`.
  static func send(
    _ middleware: CachingMiddleware, _ transport: InMemoryTransport, _ request: HTTPRequest,
    body: RequestBody? = nil
  ) async throws -> (HTTPResponse, ResponseBody) {
    try await middleware.intercept(request, body: body, options: TransportOptions()) {
      try await transport.send($0, body: $1, options: $2)
    }
  }

  static func get(_ path: String = "/a", _ fields: HTTPFields = [:]) -> HTTPRequest {
    HTTPRequest(
      method: .get, scheme: "http", authority: "h.test", path: path, headerFields: fields)
  }

  static func etag(_ value: String) -> HTTPFields {
    var fields = HTTPFields()
    fields[.eTag] = value
    return fields
  }

  @Test(
    "no network, no route, no name, no answer: the stored body, stale, with its age",
    arguments: [CourierError.Kind.offline, .cannotReachHost, .dns, .timedOut])
  func offlineKinds(kind: CourierError.Kind) async throws {
    let store = MemoryStore()
    let seconds = Mutex(0.0)
    let middleware = CachingMiddleware(
      store: store, partition: { "p" },
      now: { Self.start.addingTimeInterval(seconds.withLock { $0 }) })
    let transport = InMemoryTransport()
    transport.enqueue(status: .ok, json: #"{"v":1}"#, headerFields: Self.etag("\"1\""))
    transport.enqueue(failure: CourierError(kind))
    _ = try await Self.send(middleware, transport, Self.get())
    seconds.withLock { $0 = 95 }
    let (response, body) = try await Self.send(middleware, transport, Self.get())
    #expect(body.bytes == Data(#"{"v":1}"#.utf8))
    #expect(response.headerFields[.courierCache] == "stale")
    #expect(response.headerFields[.age] == "95")
  }

  @Test(
    "other failures are not masked by the stored body",
    arguments: [CourierError.Kind.connectionLost, .tls, .invalidResponse, .cancelled])
  func otherFailures(kind: CourierError.Kind) async throws {
    let store = MemoryStore()
    let middleware = CachingMiddleware(store: store, partition: { "p" }, now: { Self.start })
    let transport = InMemoryTransport()
    transport.enqueue(status: .ok, json: "[]", headerFields: Self.etag("\"1\""))
    transport.enqueue(failure: CourierError(kind))
    _ = try await Self.send(middleware, transport, Self.get())
    await #expect(throws: CourierError.self) {
      _ = try await Self.send(middleware, transport, Self.get())
    }
  }

  @Test("a 304 to the middleware's own If-None-Match answers the stored body as a 200")
  func revalidation() async throws {
    let store = MemoryStore()
    let middleware = CachingMiddleware(store: store, partition: { "p" }, now: { Self.start })
    let transport = InMemoryTransport()
    transport.enqueue(status: .ok, json: "[1,2,3]", headerFields: Self.etag("\"7\""))
    var notModified = Self.etag("\"7\"")
    notModified[.cacheControl] = "max-age=30"
    transport.enqueue(
      .response(HTTPResponse(status: .notModified, headerFields: notModified), body: ResponseBody())
    )
    _ = try await Self.send(middleware, transport, Self.get())
    let (response, body) = try await Self.send(middleware, transport, Self.get())
    #expect(response.status == .ok)
    #expect(body.bytes == Data("[1,2,3]".utf8))
    #expect(response.headerFields[.courierCache] == "revalidated")
    #expect(transport.requests.last?.headerFields[.ifNoneMatch] == "\"7\"")
    // The 304's max-age now makes the entry fresh: the third call sends nothing.
    let (third, _) = try await Self.send(middleware, transport, Self.get())
    #expect(third.headerFields[.courierCache] == "hit")
    #expect(transport.requests.count == 2)
  }

  @Test("a caller's own conditional request passes through: its 304 is the caller's")
  func callerConditional() async throws {
    let store = MemoryStore()
    let middleware = CachingMiddleware(store: store, partition: { "p" }, now: { Self.start })
    let transport = InMemoryTransport()
    transport.enqueue(
      .response(
        HTTPResponse(status: .notModified, headerFields: Self.etag("\"1\"")), body: ResponseBody()))
    var fields = HTTPFields()
    fields[.ifNoneMatch] = "\"1\""
    let (response, _) = try await Self.send(middleware, transport, Self.get("/a", fields))
    #expect(response.status == .notModified)
    #expect(store.count == 0)
  }

  @Test("a write's success removes the URL's entries; a write's failure does not")
  func invalidation() async throws {
    let store = MemoryStore()
    let middleware = CachingMiddleware(store: store, partition: { "p" }, now: { Self.start })
    let transport = InMemoryTransport()
    transport.enqueue(status: .ok, json: "[]", headerFields: Self.etag("\"1\""))
    transport.enqueue(status: .unprocessableContent, json: #"{"error":"x"}"#)
    transport.enqueue(status: .created, json: "{}")
    _ = try await Self.send(middleware, transport, Self.get())
    var post = Self.get()
    post.method = .post
    _ = try await Self.send(middleware, transport, post, body: .bytes(Data("{}".utf8)))
    #expect(store.count == 1)
    _ = try await Self.send(middleware, transport, post, body: .bytes(Data("{}".utf8)))
    #expect(store.count == 0)
  }
}
