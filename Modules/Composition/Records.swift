import CourierCore
import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The records of one collection, offline first: ``list()`` shows the cache at once and then the
/// server's copy; writes apply locally at once, are checked against the collection's
/// declaration, and wait in the local store's one outbox until the session's `sync()` or
/// `watch()` sends them, in order, each with its `Idempotency-Key`.
///
/// Every collection goes through this type: articles as ``Articles`` (`Records<Article>`), a
/// collection the config file or the caller declares as `Records<JSONRecord>`. Reach them from
/// ``CourierSession/collections``; the outbox they share is ``CourierSession/outbox(warn:)``.
public struct Records<Record: CollectionRecord>: Sendable {
  /// The collection's declaration.
  public let collection: CollectionDescription
  /// The sync engine underneath (conflicts, the store's replayer, its state streams). Made at
  /// the first use: an ``add(_:)`` before any other call writes to the store without it or the
  /// replayer (an offline `courier articles add`, decision 1410).
  package var engine: SyncEngine<Record> { lazyEngine.value }
  private let lazyEngine: LazyEngine
  private let shared: OutboxSync
  /// A cached snapshot read from chosen members (``Articles``' titles and bodies, decision
  /// 1404); nil, or a store that cannot project, reads the records whole.
  private let projection: (@Sendable (any LocalStore) throws -> SyncSnapshot<Record>?)?
  private var store: any LocalStore { shared.store }

  /// Records whose engine `makeEngine` makes at the first use, over the store's replayer.
  init(
    collection: CollectionDescription, shared: OutboxSync,
    projection: (@Sendable (any LocalStore) throws -> SyncSnapshot<Record>?)? = nil,
    makeEngine: @escaping @Sendable (OutboxReplayer) -> SyncEngine<Record>
  ) {
    self.collection = collection
    self.shared = shared
    self.projection = projection
    lazyEngine = LazyEngine { makeEngine(shared.replayer) }
  }

  /// The engine, made once at the first use and shared by the copies of these records.
  private final class LazyEngine: Sendable {
    private let made = Mutex<SyncEngine<Record>?>(nil)
    private let make: @Sendable () -> SyncEngine<Record>

    init(_ make: @escaping @Sendable () -> SyncEngine<Record>) { self.make = make }

    var value: SyncEngine<Record> {
      made.withLock { made in
        if let made { return made }
        let engine = make()
        made = engine
        return engine
      }
    }
  }

  // MARK: - Reads

  /// The cached records at once, then the server's when the refresh answers. A failed refresh
  /// keeps the cache and says why in the second snapshot (`error`).
  /// - Returns: one or two snapshots.
  public func list() -> AsyncThrowingStream<SyncSnapshot<Record>, any Error> { engine.list() }

  /// The cached records, without the network.
  /// - Returns: a `cache` snapshot with its age.
  /// - Throws: `StoreError` when the store cannot be read.
  public func cached() async throws -> SyncSnapshot<Record> {
    if let projection, let snapshot = try projection(store) { return snapshot }
    return try await engine.cached()
  }

  /// Asks the server for the collection (`If-None-Match`); a failure keeps the cache.
  /// - Returns: a `network` snapshot; its `error` says why a refresh failed.
  public func refresh() async -> SyncSnapshot<Record> { await engine.refresh() }

  /// One record from the local store, with whether it waits to be sent.
  /// - Parameter id: the record's id.
  /// - Returns: the record, or nil when the store has none (or only its pending deletion).
  /// - Throws: `StoreError` when the store cannot be read, `CourierError` of kind `decoding`
  ///   when the stored record does not read as `Record`.
  public func record(id: String) throws -> SyncItem<Record>? {
    guard let stored = try stored(id: id), !stored.isDeleted else { return nil }
    return SyncItem(value: try Record(record: stored), state: stored.state)
  }

  /// The stored record as it is: its payload, its local state (a deletion waiting to be sent
  /// included) and the server's copy it was last seen at.
  /// - Parameter id: the record's id.
  /// - Returns: the record, or nil when the store has none.
  /// - Throws: `StoreError` when the store cannot be read.
  public func stored(id: String) throws -> LocalRecord? {
    try store.record(RecordKey(collection: collection.name, id: id))
  }

  // MARK: - Writes

  /// Adds a record with the caller's id locally and queues it.
  /// - Parameter record: the new record.
  /// - Returns: the receipt: the id (`key.id`), the outbox entry, the record as shown.
  /// - Throws: `CourierError.invalidInput` naming the field that does not fit the declaration;
  ///   `StoreError` when it cannot be saved (nothing changed then).
  @discardableResult
  public func add(_ record: Record) async throws -> WriteReceipt {
    // Before the store's replayer exists, the engine's own creation and commit straight to the
    // store, without making the replayer (a read of the whole outbox) for a write nothing in
    // this process may send (decision 1410); the replayer made later reads it with the rest.
    let collection = collection
    let store = store
    if let receipt = try shared.beforeReplayer({
      let (change, operation) = try SyncEngine<Record>.creation(
        of: record, in: collection, at: Date())
      return try SyncEngine<Record>.commit(change, operation, to: store)
    }) {
      shared.observation.recordOutbox()
      return receipt
    }
    return try await engine.create(record)
  }

  /// Saves a record with all its fields locally and queues the update.
  /// - Parameter record: the record with its changes.
  /// - Returns: the receipt (the outbox entry).
  /// - Throws: `StoreError.notFound` when no such record is stored (or it is deleted);
  ///   `CourierError.invalidInput` when it does not fit the declaration.
  @discardableResult
  public func save(_ record: Record) async throws -> WriteReceipt {
    try await engine.update(record)
  }

  /// Deletes a record locally and queues the deletion.
  /// - Parameter id: the record's id.
  /// - Returns: the receipt.
  /// - Throws: `StoreError.notFound` when no such record is stored; `StoreError` when it cannot
  ///   be saved.
  @discardableResult
  public func delete(id: String) async throws -> WriteReceipt {
    try await engine.delete(id: id)
  }
}

extension Records {
  /// Adds a record with files for its attachment fields (`CollectionDescription.attachments`,
  /// decision 2520), as one compound write: each file is prepared with the upload rules
  /// (compressed when worth it) and kept as a private copy in the data folder, the record is
  /// applied locally at once with a local reference to it (`courier-local:<id>`) and queued as
  /// one outbox entry. The replay sends the files first, then the record with the server's
  /// references in their place.
  /// - Parameters:
  ///   - record: the new record (its attachment fields in `files` are set by the write).
  ///   - files: the file of each attachment field.
  /// - Returns: the receipt: the id, the outbox entry, the record as shown.
  /// - Throws: `CourierError.invalidInput` (a field that is not an attachment, a record that
  ///   does not fit the declaration, an original that must not be sent), `fileUnavailable`;
  ///   `StoreError` when it cannot be kept (nothing is left then).
  @discardableResult
  public func add(_ record: Record, attaching files: [String: URL]) async throws -> WriteReceipt {
    try await attach(record, files, existing: false)
  }

  /// Saves a record with new files for its attachment fields, as ``add(_:attaching:)`` does;
  /// to remove a file, save the record without the field.
  /// - Parameters:
  ///   - record: the stored record with its changes.
  ///   - files: the new file of each attachment field.
  /// - Returns: the receipt.
  /// - Throws: `StoreError.notFound` when no such record is stored; as ``add(_:attaching:)``.
  @discardableResult
  public func save(_ record: Record, attaching files: [String: URL]) async throws -> WriteReceipt {
    try await attach(record, files, existing: true)
  }

  private func attach(_ record: Record, _ files: [String: URL], existing: Bool) async throws
    -> WriteReceipt
  {
    let collection = collection
    let store = store
    for field in files.keys.sorted() where !collection.attachments.contains(field) {
      let known =
        collection.attachments.isEmpty
        ? "none" : collection.attachments.joined(separator: ", ")
      throw CourierError(
        .invalidInput, code: "not_an_attachment",
        serverMessage: "“\(field)” is not an attachment field of \(collection.name) "
          + "(attachments: \(known)).", field: field)
    }
    guard let makeQueue = shared.attachments, !files.isEmpty else {
      return existing ? try await save(record) : try await add(record)
    }
    // Refused before any file is prepared: a record that could never be sent.
    try collection.validate(
      Attachment.substituting(record.payload, files.mapValues { _ in Attachment.local("-") }))
    let key = RecordKey(collection: collection.name, id: record.id)
    let receipt = try await makeQueue().keep(files) { references in
      let payload = Attachment.substituting(record.payload, references)
      var kind = OutboxKind.create
      var base: Int?
      if existing {
        guard let stored = try store.record(key), !stored.isDeleted else {
          throw StoreError(.notFound, "No \(collection.name) record has id \(record.id).")
        }
        kind = stored.server == nil ? .create : .update
        base = stored.version
      }
      let operation = OutboxOperation(
        key: key, kind: kind, payload: payload, baseVersion: base, enqueuedAt: Date())
      return try SyncEngine<Record>.commit(.put(key, payload: payload), operation, to: store)
    }
    shared.observation.recordOutbox()
    if shared.hasReplayer {
      await engine.reloadState()
      await engine.scheduleReplay()
    }
    return receipt
  }
}

/// Articles kept offline first: the built-in `articles` collection
/// (`CollectionDescription.articles`) as typed `Article` values, on the same code path as
/// every other collection.
public typealias Articles = Records<Article>

extension Records where Record == Article {
  /// Adds an article locally, with a new client-made id, and queues it.
  /// - Parameters:
  ///   - title: the title.
  ///   - body: the text.
  /// - Returns: the receipt: the new id (`key.id`), the outbox entry, the record as shown.
  /// - Throws: `StoreError` when it cannot be saved.
  @discardableResult
  public func add(title: String, body: String = "") async throws -> WriteReceipt {
    try await add(Article(id: UUID().uuidString.lowercased(), title: title, body: body))
  }

  /// The cached articles read from their titles and bodies only, when the store can (SQLite):
  /// the same snapshot as a whole read, three times faster (decision 1404).
  static let projection: @Sendable (any LocalStore) throws -> SyncSnapshot<Article>? = { store in
    guard let projecting = store as? any RecordFieldsReading else { return nil }
    let fields = try projecting.fields(Article.listedFields, in: Article.collection)
    let state = try store.collectionState(Article.collection)
    return Article.cachedSnapshot(fields, lastRefresh: state.lastRefresh, now: Date())
  }
}

extension Records where Record == JSONRecord {
  /// Adds a record locally and queues it.
  /// - Parameters:
  ///   - fields: its fields (checked against the declaration).
  ///   - id: its id; a new client-made UUID when nil.
  /// - Returns: the receipt: the id (`key.id`), the outbox entry, the record as shown.
  /// - Throws: `CourierError.invalidInput` naming the field that does not fit the declaration;
  ///   `StoreError` when it cannot be saved (nothing changed then).
  @discardableResult
  public func add(_ fields: [String: JSONValue], id: String? = nil) async throws -> WriteReceipt {
    try await add(JSONRecord(id: id ?? UUID().uuidString.lowercased(), fields: fields))
  }

  /// Changes some fields of a stored record locally and queues the update: `set` replaces or
  /// adds fields, `remove` takes fields out; the others keep their local value.
  /// - Parameters:
  ///   - id: the record's id.
  ///   - set: the fields to set.
  ///   - remove: the fields to remove.
  /// - Returns: the receipt.
  /// - Throws: `StoreError.notFound` when no such record is stored (or it is deleted);
  ///   `CourierError.invalidInput` when the result does not fit the declaration.
  @discardableResult
  public func change(id: String, set: [String: JSONValue], remove: [String] = []) async throws
    -> WriteReceipt
  {
    guard var record = try record(id: id)?.value else {
      throw StoreError(.notFound, "No \(collection.name) record has id \(id).")
    }
    record.fields.merge(set) { $1 }
    for name in remove { record.fields[name] = nil }
    return try await save(record)
  }
}
