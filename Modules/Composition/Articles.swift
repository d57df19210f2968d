import CourierCore
import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Articles kept offline first: ``list()`` shows the cache at once and then the server's
/// copy; writes apply locally at once and wait in a durable outbox until ``sync(activity:)`` or
/// ``watch(activity:)`` sends them, in order, each with its `Idempotency-Key`.
///
/// Replays take the data folder's ``SyncLock``, so two processes never send the same outbox at
/// once; a replay that finds another process syncing throws ``SyncInProgressError`` and
/// leaves the writes for it.
public struct Articles: Sendable {
  /// The sync engine underneath: conflicts, state streams and everything below the façade.
  /// A session's is made at the first use, with the store's replayer: an ``add(_:)`` before
  /// any other call writes to the store without either (an offline `courier articles add`).
  public var engine: SyncEngine<Article> { lazyEngine.value }
  private let lazyEngine: LazyEngine
  private let shared: OutboxSync
  private var store: any LocalStore { shared.store }

  /// Articles over an engine and its store (for tests and custom wiring: no cross-process
  /// lock, and ``watch(activity:)`` expects the caller to run the engine's path monitor).
  /// - Parameters:
  ///   - engine: the engine.
  ///   - store: the local store the engine uses.
  public init(engine: SyncEngine<Article>, store: any LocalStore) {
    self.init(
      shared: OutboxSync(store: store, replayer: engine.replayer, lock: nil, monitor: nil),
      engine: LazyEngine(engine))
  }

  /// Articles whose engine `makeEngine` makes at the first use, over the shared replayer.
  init(
    shared: OutboxSync, makeEngine: @escaping @Sendable (OutboxReplayer) -> SyncEngine<Article>
  ) {
    self.init(shared: shared, engine: LazyEngine { makeEngine(shared.replayer) })
  }

  private init(shared: OutboxSync, engine: LazyEngine) {
    self.shared = shared
    self.lazyEngine = engine
  }

  /// The engine, made once at the first use and shared by the copies of these articles.
  private final class LazyEngine: Sendable {
    private let made: Mutex<SyncEngine<Article>?>
    private let make: @Sendable () -> SyncEngine<Article>

    init(_ engine: SyncEngine<Article>) {
      made = Mutex(engine)
      make = { engine }
    }

    init(_ make: @escaping @Sendable () -> SyncEngine<Article>) {
      made = Mutex(nil)
      self.make = make
    }

    var value: SyncEngine<Article> {
      made.withLock { made in
        if let made { return made }
        let engine = make()
        made = engine
        return engine
      }
    }
  }

  // MARK: - Reads

  /// The cached articles at once, then the server's when the refresh answers. A failed
  /// refresh keeps the cache and says why in the second snapshot (`error`).
  /// - Returns: one or two snapshots.
  public func list() -> AsyncThrowingStream<SyncSnapshot<Article>, any Error> { engine.list() }

  /// The cached articles, without the network.
  /// - Returns: a `cache` snapshot with its age.
  /// - Throws: `StoreError` when the store cannot be read.
  public func cached() async throws -> SyncSnapshot<Article> {
    // A store that reads chosen members (SQLite) hands out titles and bodies without a whole
    // decode of every record: the same snapshot, three times faster (decision 1404).
    guard let projecting = store as? any RecordFieldsReading else {
      return try await engine.cached()
    }
    let fields = try projecting.fields(Article.listedFields, in: Article.collection)
    let state = try store.collectionState(Article.collection)
    return Article.cachedSnapshot(fields, lastRefresh: state.lastRefresh, now: Date())
  }

  /// Asks the server for the articles (`If-None-Match`); a failure keeps the cache.
  /// - Returns: a `network` snapshot; its `error` says why a refresh failed.
  public func refresh() async -> SyncSnapshot<Article> { await engine.refresh() }

  /// One article from the local store, with whether it waits to be sent.
  /// - Parameter id: the article's id.
  /// - Returns: the article, or nil when the store has none (or only its pending deletion).
  /// - Throws: `StoreError` when the store cannot be read, `CourierError.invalidInput` when the
  ///   stored record is not an article.
  public func article(id: String) throws -> SyncItem<Article>? {
    guard let record = try store.record(RecordKey(collection: Article.collection, id: id)),
      !record.isDeleted
    else { return nil }
    return SyncItem(value: try Article(record: record), state: record.state)
  }

  /// The stored record as it is: its payload, its local state (a deletion waiting to be sent
  /// included) and the server's version it was last seen at.
  /// - Parameter id: the article's id.
  /// - Returns: the record, or nil when the store has none.
  /// - Throws: `StoreError` when the store cannot be read.
  public func record(id: String) throws -> LocalRecord? {
    try store.record(RecordKey(collection: Article.collection, id: id))
  }

  // MARK: - Writes

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

  /// Adds an article with an id of the caller's, locally, and queues it.
  /// - Parameter article: the new article.
  /// - Returns: the receipt.
  /// - Throws: `StoreError` when it cannot be saved.
  @discardableResult
  public func add(_ article: Article) async throws -> WriteReceipt {
    // Before the store's replayer exists, straight to the store: the same change and outbox
    // entry as the engine's `create`, without making the replayer (a read of the whole
    // outbox) for a write nothing in this process may send (issue 14).
    if let receipt = try shared.beforeReplayer({ try Self.create(article, in: store) }) {
      shared.observation.recordOutbox()
      return receipt
    }
    return try await engine.create(article)
  }

  /// `SyncEngine.create` without an engine: validated, applied and queued in one transaction.
  private static func create(_ article: Article, in store: any LocalStore) throws -> WriteReceipt {
    let payload = article.payload  // built from the fields at each use: once here
    try CollectionDescription.articles.validate(payload)
    let key = RecordKey(collection: Article.collection, id: article.id)
    let operation = OutboxOperation(
      key: key, kind: .create, payload: payload, baseVersion: nil, enqueuedAt: Date())
    let result = try store.applyAndEnqueue(.put(key, payload: payload), operation)
    return WriteReceipt(
      key: key, operationID: result.entry?.id, enqueue: result, record: try store.record(key))
  }

  /// Saves a changed article locally and queues the change.
  /// - Parameter article: the article with its changes.
  /// - Returns: the receipt (the outbox entry).
  /// - Throws: `StoreError` when it cannot be saved.
  @discardableResult
  public func save(_ article: Article) async throws -> WriteReceipt {
    try await engine.update(article)
  }

  /// Deletes an article locally and queues the deletion.
  /// - Parameter id: the article's id.
  /// - Returns: the receipt.
  /// - Throws: `StoreError` when it cannot be saved.
  @discardableResult
  public func delete(id: String) async throws -> WriteReceipt {
    try await engine.delete(id: id)
  }

  // MARK: - Outbox

  /// The outbox: waiting, refused and conflicted writes, in the order they are sent.
  /// - Returns: the entries.
  /// - Throws: `StoreError` when the store cannot be read.
  public func outbox() throws -> [OutboxEntry] { try store.entries() }

  /// How many writes wait to be sent, as the store counts them: one query, without the
  /// engine's state (which reads the whole outbox when it is first made).
  /// - Returns: the number of pending entries, every collection's.
  /// - Throws: `StoreError` when the store cannot be read.
  public func pendingCount() throws -> Int { try store.counts().pending }

  /// Puts a refused or conflicted write back in the queue under a new `Idempotency-Key`.
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry, pending again.
  /// - Throws: `StoreError.notFound` for an unknown id; `StoreError` when it cannot be saved.
  @discardableResult
  public func retry(operationID: UUID) async throws -> OutboxEntry {
    try await engine.retryEntry(operationID: operationID)
  }

  /// Puts every refused and conflicted write back in the queue.
  /// - Returns: the entries now pending, in queue order.
  /// - Throws: `StoreError` when the store cannot be written.
  @discardableResult
  public func retryAll() async throws -> [OutboxEntry] { try await engine.retryAllEntries() }

  /// Drops a write with every later local change to its article, and shows the server's copy
  /// again; a queued upload's kept bytes go with it.
  /// - Parameter operationID: the entry's operation id.
  /// - Returns: the entry dropped, and the record after (nil when the server never had it).
  /// - Throws: `StoreError.notFound` for an unknown id; `StoreError` when it cannot be saved.
  @discardableResult
  public func discard(operationID: UUID) async throws -> (entry: OutboxEntry, record: LocalRecord?)
  {
    let dropped = try await engine.discardEntry(operationID: operationID)
    shared.tidy()
    shared.observation.recordOutbox()
    return dropped
  }

  // MARK: - Sync

  /// The connectivity, activity and outbox now.
  public var state: SyncState { engine.state }

  /// The current state, then each change.
  /// - Returns: the stream.
  public func states() -> AsyncStream<SyncState> { engine.states() }

  /// Sends the waiting writes now, in order, each with its `Idempotency-Key`: every
  /// collection's of this local store (one replayer per store, decision 1202).
  /// - Parameter activity: what this process says it is doing, for another's busy message.
  /// - Returns: what was sent, refused, in conflict or left pending (and why: `stoppedBy`).
  /// - Throws: ``SyncInProgressError`` when another process is syncing this data folder (it
  ///   will send them; ``state`` is reloaded first), `StoreError` when the lock file cannot be
  ///   opened.
  public func sync(activity: String = "sync") async throws -> ReplayReport {
    _ = engine  // its route registered before the replayer sends
    return try await shared.sync(activity: activity)
  }

  /// Keeps the outbox flowing until cancelled: sends it now, again whenever the network path
  /// comes back and after a backed-off wait when a transient failure stopped it; writes made
  /// meanwhile are sent by themselves, this process's and those another process leaves in the
  /// same data folder because this one holds the lock (noticed with inotify on Linux). Yields
  /// the state at once and on each change. Holds the data folder's sync lock while it runs, and
  /// runs the path monitor (shared with `CourierSession.paths()`). The store's one run loop:
  /// every collection's writes go through it.
  /// - Parameter activity: what this process says it is doing, for another's busy message.
  /// - Returns: the states; the stream throws ``SyncInProgressError`` at once when another
  ///   process is syncing, or the path monitor's error when it cannot run.
  public func watch(activity: String = "sync --watch") -> AsyncThrowingStream<SyncState, any Error>
  {
    _ = engine  // its route registered before the replayer sends
    return shared.watch(activity: activity)
  }
}

/// The data folder's `SyncLock`, held once by this process for all its replays: a `sync()`
/// while a `watch()` of the same session holds it goes ahead (replays of one engine never
/// interleave), another process is told it is busy.
final class SharedSyncLock: Sendable {
  /// The data folder.
  let directory: URL
  private let state = Mutex<(lock: SyncLock?, holders: Int)>((nil, 0))

  init(directory: URL) { self.directory = directory }

  /// Takes the lock, or joins this process's hold of it.
  /// - Throws: `SyncInProgressError` when another process holds it; `StoreError` when the
  ///   lock file cannot be opened.
  func acquire(activity: String) throws {
    try state.withLock { state in
      if state.holders == 0 {
        switch try SyncLock.acquire(in: directory, activity: activity) {
        case .acquired(let lock): state.lock = lock
        case .held(let holder):
          throw SyncInProgressError(holder: holder, dataDirectory: directory)
        }
      }
      state.holders += 1
    }
  }

  /// Leaves the hold; the last one releases the lock.
  func release() {
    let lock = state.withLock { state -> SyncLock? in
      state.holders -= 1
      guard state.holders == 0 else { return nil }
      defer { state.lock = nil }
      return state.lock
    }
    lock?.release()
  }
}
