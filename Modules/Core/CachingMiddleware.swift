import CourierDomain
import CourierPorts
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A private client cache in the request pipeline (RFC 9111, decisions 2511 and 2512): stores
/// the GET replies it may, answers a fresh one without asking, revalidates a stale one
/// (`If-None-Match`, else `If-Modified-Since`; a 304 refreshes the stored fields and the caller
/// gets the stored body), and answers the last good body when the network is down, marked
/// `Courier-Cache: stale` with its `Age`.
///
/// Never stored: a request with a body, a method other than GET, a request the caller made
/// conditional or partial itself, a reply with `no-store` (either side) or `Vary: *`, and a
/// reply that is not the server's (a 2xx body that is not JSON: a captive portal's page,
/// decision 0414). A successful write (any method but GET, HEAD, OPTIONS, TRACE) removes the
/// entries of its URL (RFC 9111 §4.4). A store that fails (full disk, damaged index) is logged
/// and bypassed: the cache never turns a reply into an error.
package struct CachingMiddleware: TransportMiddleware {
  /// The failures that answer the stored body: no network, no route, no name, no answer.
  package static let offlineKinds: [CourierError.Kind] = [
    .offline, .cannotReachHost, .dns, .timedOut,
  ]

  private let store: any ResponseCacheStore
  private let partition: @Sendable () -> String
  private let now: @Sendable () -> Date
  private let revalidatesFresh: Bool

  /// Makes the middleware.
  /// - Parameters:
  ///   - store: where replies are kept.
  ///   - partition: whose replies a call may see (decision 2513), asked once per call.
  ///   - revalidatesFresh: whether a fresh entry is revalidated too, as if the request said
  ///     `Cache-Control: no-cache` (without sending it): a command a person runs to ask the
  ///     server (`courier get`) asks it whenever it can be reached, and meets its TLS checks,
  ///     while the stored body still answers when it cannot (decision 2512).
  ///   - now: the wall clock, for ages and the eviction order.
  package init(
    store: any ResponseCacheStore, partition: @escaping @Sendable () -> String,
    revalidatesFresh: Bool = false, now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.store = store
    self.partition = partition
    self.revalidatesFresh = revalidatesFresh
    self.now = now
  }

  /// The cache key of a request: its absolute URL without the fragment.
  static func key(_ request: HTTPRequest) -> String {
    "\(request.scheme ?? "")://\(request.authority ?? "")\(request.path ?? "/")"
  }

  package func intercept(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions,
    next:
      @Sendable (HTTPRequest, RequestBody?, TransportOptions) async throws -> (
        HTTPResponse, ResponseBody
      )
  ) async throws -> (HTTPResponse, ResponseBody) {
    let key = Self.key(request)
    let fields = request.headerFields
    let callerConditional =
      fields[.ifNoneMatch] != nil || fields[.ifModifiedSince] != nil || fields[.range] != nil
    guard request.method == .get, body == nil, !callerConditional else {
      let reply = try await next(request, body, options)
      if !Self.isSafe(request.method), (200..<400).contains(reply.0.status.code) {
        attempt(options, "invalidating") {
          try store.invalidate(partition: self.partition(), url: key)
        }
      }
      return reply
    }
    let partition = self.partition()
    let bypass = HTTPCacheRules.Directives(fields).noStore
    let candidates =
      bypass
      ? []
      : attempt(options, "reading") { try store.entries(partition: partition, url: key) } ?? []
    let match = candidates.filter { HTTPCacheRules.varyMatches($0.varyValues, request: fields) }
      .max { $0.storedAt < $1.storedAt }
    let time = now()
    if let match, !revalidatesFresh,
      HTTPCacheRules.isFresh(match.fields, storedAt: match.storedAt, request: fields, now: time),
      let stored = storedBody(match, options)
    {
      attempt(options, "marking") { try store.touch(match, now: time) }
      return answer(match, stored, marker: "hit", now: time)
    }
    var sent = request
    if let match {
      if let etag = match.etag {
        sent.headerFields[.ifNoneMatch] = etag
      } else if let lastModified = match.lastModified {
        sent.headerFields[.ifModifiedSince] = lastModified
      }
    }
    let response: HTTPResponse
    let responseBody: ResponseBody
    do {
      (response, responseBody) = try await next(sent, nil, options)
    } catch {
      guard Self.offlineKinds.contains(where: { $0 ~= error }), let match,
        let stored = storedBody(match, options)
      else { throw error }
      options.logger.debug(
        "answered from the response cache: the server could not be reached",
        metadata: ["courier.cache.url": "\(key)"])
      return answer(match, stored, marker: "stale", now: time)
    }
    if response.status.code == 304, let match, sent.headerFields != request.headerFields {
      let refreshed = HTTPCacheRules.updated(match.fields, with: response.headerFields)
      if let stored = storedBody(match, options) {
        attempt(options, "refreshing") { try store.refresh(match, fields: refreshed, now: time) }
        var entry = match
        entry.fields = refreshed
        entry.storedAt = time
        return answer(entry, stored, marker: "revalidated", now: time)
      }
      // The stored body vanished between the lookup and the 304: ask again, unconditionally.
      return try await next(request, nil, options)
    }
    if HTTPCacheRules.isStorable(request: request, hasBody: false, response: response),
      Self.isServerReply(response, responseBody.bytes),
      let names = HTTPCacheRules.varyNames(response.headerFields)
    {
      attempt(options, "storing") {
        try store.store(
          partition: partition, url: key,
          varyValues: HTTPCacheRules.varyValues(names, of: fields),
          status: response.status.code, fields: response.headerFields,
          body: responseBody.bytes, now: time)
      }
    } else if (200..<300).contains(response.status.code), !candidates.isEmpty {
      // A success the cache may not keep (no-store, Vary: *) outdates what it kept.
      attempt(options, "invalidating") { try store.invalidate(partition: partition, url: key) }
    }
    return (response, responseBody)
  }

  /// The stored reply as an answer: its fields with its current `Age` and the marker.
  private func answer(_ entry: CachedResponse, _ body: Data, marker: String, now: Date)
    -> (HTTPResponse, ResponseBody)
  {
    var fields = entry.fields
    let age = HTTPCacheRules.currentAge(entry.fields, storedAt: entry.storedAt, now: now)
    fields[.age] = String(Int(age.rounded(.down)))
    fields[.courierCache] = marker
    return (
      HTTPResponse(status: .init(code: entry.status), headerFields: fields),
      ResponseBody(bytes: body)
    )
  }

  private func storedBody(_ entry: CachedResponse, _ options: TransportOptions) -> Data? {
    attempt(options, "reading a body of") { try store.body(of: entry) }
  }

  /// Runs a store call; a failure is logged and answered nil.
  @discardableResult
  private func attempt<T>(_ options: TransportOptions, _ what: String, _ body: () throws -> T)
    -> T?
  {
    do {
      return try body()
    } catch {
      options.logger.warning(
        "the response cache failed while \(what) it and was bypassed",
        metadata: ["courier.cache.error": "\(error)"])
      return nil
    }
  }

  static func isSafe(_ method: HTTPRequest.Method) -> Bool {
    [.get, .head, .options, .trace].contains(method)
  }

  /// Whether a reply is one the pipeline takes as the server's: a 2xx body that is empty or
  /// JSON (`DeliveryProof.apiReply`); a page is what a portal answers.
  static func isServerReply(_ response: HTTPResponse, _ body: Data) -> Bool {
    (try? DeliveryProof.apiReply(response, body: body)) != nil
  }
}
