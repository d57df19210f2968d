import CourierDomain
import CourierPorts
import CourierSystem
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
  /// A record holding a field nested deeper than Courier reads (`JSONValue.maximumDepth`) is
  /// refused, its stored copy left as it was, while the others are refreshed; the `ETag` is
  /// not kept then, so the next refresh asks again (decision 2428).
  /// - Returns: true for a 304.
  /// - Throws: the `CourierError` of a failed request or a list that is not the server's (the
  ///   store is left as it was); `record_too_deep` naming the collection, the record and the
  ///   field, after the other records were stored; or a `StoreError`.
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
    let list = try parseList(body.bytes, contentType: response.headerFields[.contentType])
    try store.applyServerList(
      list.records, collection: collection.name,
      etag: list.tooDeep.isEmpty ? response.headerFields[.eTag] : nil, refreshedAt: now(),
      keeping: Set(list.tooDeep.map(\.id)))
    if !list.tooDeep.isEmpty { throw tooDeep(list.tooDeep) }
    return false
  }

  /// A list reply read: the records, and those refused for a field nested too deep.
  package struct List: Sendable {
    /// The records read.
    package var records: [ServerRecord]
    /// The records the list holds but that were not read: each one's id and the field nested
    /// deeper than `JSONValue.maximumDepth`.
    package var tooDeep: [(id: String, field: String)]
  }

  /// The refusal of records holding fields nested too deep: a bad reply (`invalidResponse`,
  /// exit 76), naming the collection, the first record and its field.
  func tooDeep(_ refused: [(id: String, field: String)]) -> CourierError {
    let first = refused[0]
    let others =
      refused.count == 1
      ? "" : " (and \(refused.count - 1) other record\(refused.count == 2 ? "" : "s"))"
    return CourierError(
      .invalidResponse, status: 200, code: "record_too_deep",
      serverMessage:
        "The server's \(collection.name) record “\(Self.shown(first.id))”\(others) holds the "
        + "field “\(Self.shown(first.field))” nested deeper than \(JSONValue.maximumDepth) "
        + "levels, more than Courier reads: it was not refreshed, and the copy kept here is "
        + "unchanged. The other records were refreshed.",
      field: first.field, mayHaveReachedServer: true,
      context: "the \(collection.name) list, record \(first.id)")
  }

  /// A server's text in a sentence: at most 60 characters.
  static func shown(_ text: String) -> String {
    text.count > 60 ? String(text.prefix(60)) + "…" : text
  }

  /// Reads a list reply as the collection's records.
  /// - Returns: the records, and the ids of those holding a field nested deeper than Courier
  ///   reads, with that field.
  /// - Throws: `CourierError`: `notTheServer` for a body that is not JSON, `decoding` for one
  ///   that is not a list of records, `invalidResponse` (`list_too_deep`) for nesting too deep
  ///   that no record's field holds (an element that is not a record, a record's id).
  /// A body that says it is JSON (`Content-Type`) and does not parse is a bad reply
  /// (`invalidResponse`, `reply_bad_json`), not a login page (`DeliveryProof.unparseable`,
  /// decision 2423).
  /// - Parameters:
  ///   - body: the reply's body.
  ///   - contentType: the reply's `Content-Type`, if known.
  package func parseList(_ body: Data, contentType: String? = nil) throws -> List {
    let parsed: (value: JSONValue, tooDeep: [[JSONPathStep]])
    do {
      parsed = try JSONValue.parsingSkippingTooDeep(body)
    } catch {
      // A list that is not JSON at all is a page from something else on the network (a Wi-Fi
      // login page answering every request): the stored list is kept, as for any failure.
      var failure = DeliveryProof.unparseable(
        contentType: contentType, status: 200, bytes: body.count,
        context: "the \(collection.name) list")
      if failure.kind == .notTheServer { failure.code = "list_not_json" }
      failure.underlying = String(describing: error)
      throw failure
    }
    guard case .array(let elements) = parsed.value else {
      throw CourierError(
        .decoding, code: "list_not_array", context: "the \(collection.name) list")
    }
    // Each value nested too deep is a field of one record (`[i].field…`), or the list is not
    // one this reader can keep any of.
    var refused: [Int: String] = [:]
    for path in parsed.tooDeep {
      guard path.count >= 2, case .element(let index) = path[0], case .member(let field) = path[1],
        field != collection.schema.idKey,
        let id = elements[index][collection.schema.idKey]?.stringValue, !id.isEmpty
      else {
        throw CourierError(
          .invalidResponse, status: 200, code: "list_too_deep", mayHaveReachedServer: true,
          underlying: "nested deeper than \(JSONValue.maximumDepth) levels at "
            + JSONPathStep.text(path),
          context: "the \(collection.name) list")
      }
      if refused[index] == nil { refused[index] = field }
    }
    var list = List(records: [], tooDeep: [])
    list.records.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      if let field = refused[index], let id = element[collection.schema.idKey]?.stringValue {
        list.tooDeep.append((id, field))
      } else {
        list.records.append(try collection.schema.serverRecord(from: element))
      }
    }
    return list
  }
}
