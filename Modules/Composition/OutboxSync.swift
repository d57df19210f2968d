import CourierCore
import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The sending side of one local store, shared by every collection of a session (`Records`),
/// its queued uploads and its `sync()`: the store's one `OutboxReplayer`, the data folder's
/// sync lock (one process replays a folder at a time) and the path monitor's shared run.
///
/// The replayer is made on first use: making it reads the whole outbox (its first state), which
/// a write that nothing will send in this process (an offline `courier articles add`) does not
/// need. Such a write goes to the store through ``beforeReplayer(_:)``. Routes are
/// registered once, with the replayer or when added (``register(_:)``), so nothing needs to be
/// made before a replay for its route to be there.
final class OutboxSync: Sendable {
  let store: any LocalStore
  /// The store's replayer, made (with its routes) at the first use.
  var replayer: OutboxReplayer {
    made.withLock { made in
      if let replayer = made.replayer { return replayer }
      let replayer = makeReplayer()
      for route in made.routes { replayer.register(route) }
      made = (replayer, [])
      return replayer
    }
  }
  /// The replayer once made; before, the routes added for it.
  private let made: Mutex<(replayer: OutboxReplayer?, routes: [ReplayRoute])>
  private let makeReplayer: @Sendable () -> OutboxReplayer
  /// The data folder's `SyncLock`, taken once for every replay of this process; nil when the
  /// store is not shared.
  let lock: SharedSyncLock?
  /// Runs the path monitor while `watch()` needs it (the session's one run of it).
  let monitor: SharedRun
  /// Run after a pass and after a discard: the session removes the files of queued uploads
  /// that left the outbox (decision 1302).
  let tidy: @Sendable () -> Void
  /// Logs and measures the passes it runs and the outbox (decision 2203).
  let observation: ReplayObservation
  /// Keeps the files of compound writes (decision 2520); nil when the session keeps none.
  let attachments: (@Sendable () -> AttachmentQueue)?
  /// Makes the replay route of a collection opened in code (or with a field resolver): its
  /// records' sender, or the compound writes' sender when it has attachment fields, so that a
  /// local reference never reaches the server; nil for the plain records' route.
  let route: (@Sendable (CollectionDescription, FieldResolver?) -> ReplayRoute)?

  /// The sending side of a store whose replayer `makeReplayer` makes at the first use.
  init(
    store: any LocalStore, observation: ReplayObservation,
    makeReplayer: @escaping @Sendable () -> OutboxReplayer, lock: SharedSyncLock?,
    monitor: SharedRun, tidy: @escaping @Sendable () -> Void,
    route: (@Sendable (CollectionDescription, FieldResolver?) -> ReplayRoute)? = nil,
    attachments: (@Sendable () -> AttachmentQueue)? = nil
  ) {
    self.route = route
    self.attachments = attachments
    self.store = store
    self.observation = observation
    self.made = Mutex((nil, []))
    self.makeReplayer = makeReplayer
    self.lock = lock
    self.monitor = monitor
    self.tidy = tidy
  }

  /// Runs a write while the replayer is not made yet, and holds off its making until the write
  /// returns. Such a write tells no replayer: none exists, so no run loop waits for writes, and
  /// the replayer made later reads this write with the rest of the outbox.
  /// - Parameter write: the write, straight to ``store``.
  /// - Returns: what `write` returns; nil, without running it, when the replayer exists (the
  ///   caller then writes through its engine, which tells the replayer).
  /// - Throws: what `write` throws.
  func beforeReplayer<T: Sendable>(_ write: () throws -> T) throws -> T? {
    try made.withLock { made throws -> T? in
      guard made.replayer == nil else { return nil }
      return try write()
    }
  }

  /// Whether the replayer is made (a write straight to the store must then tell it).
  var hasReplayer: Bool { made.withLock { $0.replayer != nil } }

  /// Registers a route on the replayer, or keeps it for the replayer's making: a collection
  /// declared in code is sent by the next replay without making the replayer now.
  /// - Parameter route: the route (it replaces one of the same collection).
  func register(_ route: ReplayRoute) {
    made.withLock { made in
      if let replayer = made.replayer {
        replayer.register(route)
      } else {
        made.routes.removeAll { $0.collection == route.collection }
        made.routes.append(route)
      }
    }
  }

  /// Sends the store's waiting writes now, every collection's, under the sync lock.
  func sync(activity: String) async throws -> ReplayReport {
    try await withSyncLock(activity: activity) {
      defer { tidy() }
      // The replayer logs and times the pass itself (decision 2301).
      let report = await replayer.replay()
      observation.recordOutbox()
      return report
    }
  }

  /// The store's run loop under the sync lock, with the path monitor and the folder watch. A
  /// watch is long-running: while another process holds the lock it waits for it (telling
  /// `onHeld` who holds it) rather than ending (decision 2426).
  func watch(
    activity: String, onHeld: @escaping @Sendable (SyncLock.Holder) -> Void = { _ in }
  ) -> AsyncThrowingStream<SyncState, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: SyncState.self)
    let replayer = replayer
    let monitor = monitor
    let observation = observation
    let folder = lock?.directory.path
    let task = Task {
      do {
        try await withSyncLock(activity: activity, waiting: onHeld) {
          // Another process's writes to this folder's outbox: it found the lock held, and the
          // writes are this watch's to send. The folder is watched, and the outbox read, before
          // the first pass starts: a write committed before that read is in the first pass, one
          // after it is noticed (decision 2711).
          let others = folder.map { (FolderChanges.stream($0), Self.pendingIDs(replayer)) }
          try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await monitor.run() }
            if case let (changes, pending)? = others {
              group.addTask {
                await Self.sendOthersWrites(replayer, changes: changes, pending: pending)
              }
            }
            // The first pass inside the loop, once it counts as watching: no write can fall
            // between that pass and the ones writes ask for while watching.
            group.addTask { await replayer.run(replayingFirst: true) }
            group.addTask {
              for await state in replayer.states() { continuation.yield(state) }
            }
            // The outbox gauges follow the run loop's states (its passes are its own).
            if observation.isEnabled {
              group.addTask { await observation.follow(replayer.states()) }
            }
            // The monitor throwing ends the watch; anything else runs until cancelled.
            while try await group.next() != nil {}
          }
        }
        continuation.finish()
      } catch {
        continuation.finish(throwing: error)
      }
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  /// Reloads the outbox after each change to the data folder, and asks for a pass when a write
  /// is pending that was not at the previous reload (only another process adds them while this
  /// one holds the lock, a new write or a retried one under a new id; this process's own passes
  /// only settle or take away, so a stopped pass is not hurried past its backoff). A count would
  /// not tell: the first pass may take away as many as another process adds.
  /// - Parameters:
  ///   - replayer: the run loop's replayer.
  ///   - changes: the folder's changes, watched since before `pending` was read.
  ///   - pending: the pending writes' ids when the watch began.
  private static func sendOthersWrites(
    _ replayer: OutboxReplayer, changes: AsyncStream<Void>, pending: Set<UUID>
  ) async {
    var seen = pending
    for await _ in changes {
      let now = pendingIDs(replayer)
      if !now.isSubset(of: seen) { replayer.requestReplay() }
      seen = now
    }
  }

  /// The outbox's pending writes' ids, reloaded into the replayer's state. A change is noticed
  /// as another process's write begins, before its commit is visible: the read waits for that
  /// write to end first.
  private static func pendingIDs(_ replayer: OutboxReplayer) -> Set<UUID> {
    try? replayer.store.waitForWriters()
    let entries = replayer.reloadState() ?? []
    return Set(entries.filter { $0.state.isPending }.map(\.id))
  }

  /// Runs `body` under the data folder's sync lock.
  /// - Parameters:
  ///   - activity: what this process does, for another's busy message.
  ///   - onHeld: nil to fail at once when another process holds the lock (a one-shot
  ///     command); else the lock is waited for, and this is told who holds it.
  ///   - body: the work.
  /// - Returns: what `body` returns.
  /// - Throws: `SyncInProgressError` (without `onHeld`), `CancellationError` (cancelled while
  ///   waiting), `StoreError`, or what `body` throws.
  func withSyncLock<T: Sendable>(
    activity: String, waiting onHeld: (@Sendable (SyncLock.Holder) -> Void)? = nil,
    _ body: () async throws -> T
  ) async throws -> T {
    guard let lock else { return try await body() }
    do {
      if let onHeld {
        try await lock.acquireWaiting(activity: activity, onHeld: onHeld)
      } else {
        try lock.acquire(activity: activity)
      }
    } catch let busy as SyncInProgressError {
      replayer.reloadState()
      throw busy
    }
    defer { lock.release() }
    return try await body()
  }
}
