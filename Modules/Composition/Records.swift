import CourierCore
import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The records of any declared collection, offline first, as JSON fields: what ``Articles``
/// does for articles, for a collection the config file (or the caller) declares. ``list()``
/// shows the cache at once and then the server's copy; writes apply locally at once, are
/// checked against the declaration, and wait in the durable outbox (the same one as every other
/// collection of the data folder) until ``sync(activity:)`` or ``watch(activity:)`` sends them.
public struct Records: Sendable {
  /// The sync engine underneath.
  public let engine: SyncEngine<JSONRecord>
  private let shared: OutboxSync
  private var store: any LocalStore { shared.store }

  /// Records over an engine and its store (for tests and custom wiring: no cross-process lock,
  /// and ``watch(activity:)`` expects the caller to run the path monitor).
  /// - Parameters:
  ///   - engine: the engine.
  ///   - store: the local store the engine uses.
  public init(engine: SyncEngine<JSONRecord>, store: any LocalStore) {
    self.init(
      engine: engine,
      shared: OutboxSync(store: store, replayer: engine.replayer, lock: nil, monitor: nil))
  }

  init(engine: SyncEngine<JSONRecord>, shared: OutboxSync) {
    self.engine = engine
    self.shared = shared
  }

  /// The collection's declaration.
  public var collection: CollectionDescription { engine.collection }

  // MARK: - Reads

  /// The cached records at once, then the server's when the refresh answers. A failed refresh
  /// keeps the cache and says why in the second snapshot (`error`).
  /// - Returns: one or two snapshots.
  public func list() -> AsyncThrowingStream<SyncSnapshot<JSONRecord>, any Error> {
    engine.list()
  }

  /// The cached records, without the network.
  /// - Returns: a `cache` snapshot with its age.
  /// - Throws: `StoreError` when the store cannot be read.
  public func cached() async throws -> SyncSnapshot<JSONRecord> { try await engine.cached() }

  /// Asks the server for the collection (`If-None-Match`); a failure keeps the cache.
  /// - Returns: a `network` snapshot; its `error` says why a refresh failed.
  public func refresh() async -> SyncSnapshot<JSONRecord> { await engine.refresh() }

  /// One record from the local store, with whether it waits to be sent.
  /// - Parameter id: the record's id.
  /// - Returns: the record, or nil when the store has none (or only its pending deletion).
  /// - Throws: `StoreError` when the store cannot be read, `CourierError` of kind `decoding`
  ///   when the stored record is not a JSON object.
  public func record(id: String) throws -> SyncItem<JSONRecord>? {
    guard let stored = try stored(id: id), !stored.isDeleted else { return nil }
    return SyncItem(value: try JSONRecord(record: stored), state: stored.state)
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

  /// Adds a record locally and queues it.
  /// - Parameters:
  ///   - fields: its fields (checked against the declaration).
  ///   - id: its id; a new client-made UUID when nil.
  /// - Returns: the receipt: the id (`key.id`), the outbox entry, the record as shown.
  /// - Throws: `CourierError.invalidInput` naming the field that does not fit the declaration;
  ///   `StoreError` when it cannot be saved (nothing changed then).
  @discardableResult
  public func add(_ fields: [String: JSONValue], id: String? = nil) async throws -> WriteReceipt {
    try await engine.create(
      JSONRecord(id: id ?? UUID().uuidString.lowercased(), fields: fields))
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
    return try await engine.update(record)
  }

  /// Saves a record with all its fields locally and queues the update.
  /// - Parameter record: the record.
  /// - Returns: the receipt.
  /// - Throws: as ``change(id:set:remove:)``.
  @discardableResult
  public func save(_ record: JSONRecord) async throws -> WriteReceipt {
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

  // MARK: - Outbox and sync (the data folder's, every collection's)

  /// The outbox: every collection's waiting, refused and conflicted writes, in the order they
  /// are sent.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  public func outbox() throws -> [OutboxEntry] { try store.entries() }

  /// The connectivity, activity and outbox now.
  public var state: SyncState { engine.state }

  /// The current state, then each change.
  /// - Returns: the stream.
  public func states() -> AsyncStream<SyncState> { engine.states() }

  /// Sends every collection's waiting writes now, in outbox order (as ``Articles/sync(activity:)``).
  /// - Parameter activity: what this process says it is doing, for another's busy message.
  /// - Returns: what was sent, refused, in conflict or left pending.
  /// - Throws: ``SyncInProgressError`` when another process is syncing this data folder.
  public func sync(activity: String = "sync") async throws -> ReplayReport {
    try await shared.sync(activity: activity)
  }

  /// Keeps the outbox flowing until cancelled (as ``Articles/watch(activity:)``: the store's one
  /// run loop, under the sync lock).
  /// - Parameter activity: what this process says it is doing, for another's busy message.
  /// - Returns: the states; the stream throws ``SyncInProgressError`` at once when another
  ///   process is syncing.
  public func watch(activity: String = "sync --watch") -> AsyncThrowingStream<SyncState, any Error>
  {
    shared.watch(activity: activity)
  }
}
