import CourierDomain
import CourierPorts
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The stale-while-revalidate side of one collection: the stored records at once with their age,
/// and a revalidation with `If-None-Match` that keeps them on a 304 or any failure (nothing is
/// wiped by a network error, a page from something else, or a list that does not parse).
package struct CollectionReader: Sendable {
  /// The request pipeline.
  package let client: APIClient
  /// The local store.
  package let store: any LocalStore
  /// The collection read.
  package let collection: CollectionDescription
  private let now: @Sendable () -> Date

  /// Creates a reader.
  /// - Parameters:
  ///   - client: the request pipeline.
  ///   - store: the local store.
  ///   - collection: the collection's declaration (its path and record schema).
  ///   - now: the wall clock (ages, refresh times).
  package init(
    client: APIClient, store: any LocalStore, collection: CollectionDescription,
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.client = client
    self.store = store
    self.collection = collection
    self.now = now
  }

  /// The stored records as typed values, with their age.
  /// - Parameters:
  ///   - type: the record type.
  ///   - source: whether this shows the cache or follows a refresh.
  /// - Returns: the snapshot: readable records, pending deletions, unreadable ids.
  /// - Throws: `StoreError` when the store cannot be read.
  package func snapshot<Record: CollectionRecord>(
    _ type: Record.Type, source: SyncSnapshot<Record>.Source
  ) throws -> SyncSnapshot<Record> {
    let records = try store.records(in: collection.name)
    let state = try store.collectionState(collection.name)
    var items: [SyncItem<Record>] = []
    var deleted: [String] = []
    var unreadable: [String] = []
    for record in records {
      if record.isDeleted {
        deleted.append(record.key.id)
        continue
      }
      if let value = try? Record(record: record) {
        items.append(SyncItem(value: value, state: record.state))
      } else {
        unreadable.append(record.key.id)
      }
    }
    let age = state.lastRefresh.map { max(0, now().timeIntervalSince($0)) }
    return SyncSnapshot(
      source: source, items: items, deletedIDs: deleted, unreadable: unreadable,
      lastRefresh: state.lastRefresh, age: age)
  }

  /// Asks the server for the list with the stored `ETag`: a 200 replaces the stored list (local
  /// pending changes are kept, `LocalStorePlan.refresh`), a 304 keeps it and renews its time.
  /// - Returns: true for a 304.
  /// - Throws: the `CourierError` of a failed request or a list that is not the server's (the
  ///   store is left as it was), or a `StoreError`.
  package func revalidate() async throws -> Bool {
    let state = try store.collectionState(collection.name)
    var fields: HTTPFields = [:]
    if let etag = state.etag { fields[.ifNoneMatch] = etag }
    let (response, body) = try await client.send(
      try client.request(.get, collection.path, headerFields: fields))
    if response.status == 304 {
      try store.markNotModified(collection: collection.name, refreshedAt: now())
      return true
    }
    let records = try parseList(body.bytes)
    try store.applyServerList(
      records, collection: collection.name, etag: response.headerFields[.eTag], refreshedAt: now())
    return false
  }

  /// Reads a list reply as the collection's records.
  /// - Parameter body: the reply's body.
  /// - Returns: the records.
  /// - Throws: `CourierError`: `notTheServer` for a body that is not JSON, `decoding` for one
  ///   that is not a list of records.
  package func parseList(_ body: Data) throws -> [ServerRecord] {
    let json: JSONValue
    do {
      json = try JSONValue(parsing: body)
    } catch {
      // A list that is not JSON at all is a page from something else on the network (a Wi-Fi
      // login page answering every request): the stored list is kept, as for any failure.
      throw CourierError(
        .notTheServer, code: "list_not_json", underlying: String(describing: error),
        context: "the \(collection.name) list")
    }
    guard case .array(let elements) = json else {
      throw CourierError(
        .decoding, code: "list_not_array", context: "the \(collection.name) list")
    }
    return try elements.map { try collection.schema.serverRecord(from: $0) }
  }
}
