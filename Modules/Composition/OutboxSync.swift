import CourierCore
import CourierDomain
import CourierPorts
import Foundation

/// The sending side of one local store, shared by every collection façade of a session
/// (`Articles`, `Records`): the store's one `OutboxReplayer`, the data folder's sync lock (one
/// process replays a folder at a time) and the path monitor's shared run.
final class OutboxSync: Sendable {
  let store: any LocalStore
  let replayer: OutboxReplayer
  /// The data folder's `SyncLock`, taken once for every replay of this process; nil when the
  /// store is not shared.
  let lock: SharedSyncLock?
  /// Runs the path monitor while `watch()` needs it; nil when the caller runs it.
  let monitor: SharedRun?
  /// Run after a pass and after a discard: the session removes the files of queued uploads
  /// that left the outbox (decision 1302).
  let tidy: @Sendable () -> Void

  init(
    store: any LocalStore, replayer: OutboxReplayer, lock: SharedSyncLock?, monitor: SharedRun?,
    tidy: @escaping @Sendable () -> Void = {}
  ) {
    self.store = store
    self.replayer = replayer
    self.lock = lock
    self.monitor = monitor
    self.tidy = tidy
  }

  /// Sends the store's waiting writes now, every collection's, under the sync lock.
  func sync(activity: String) async throws -> ReplayReport {
    try await withSyncLock(activity: activity) {
      defer { tidy() }
      return await replayer.replay()
    }
  }

  /// The store's run loop under the sync lock, with the path monitor and the folder watch.
  func watch(activity: String) -> AsyncThrowingStream<SyncState, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: SyncState.self)
    let replayer = replayer
    let monitor = monitor
    let folder = lock?.directory.path
    let task = Task {
      do {
        try await withSyncLock(activity: activity) {
          try await withThrowingTaskGroup(of: Void.self) { group in
            if let monitor { group.addTask { try await monitor.run() } }
            if let folder {
              // Another process's writes to this folder's outbox: it found the lock held, and
              // the writes are this watch's to send.
              group.addTask { await Self.sendOthersWrites(replayer, changes: folder) }
            }
            // The first pass inside the loop, once it counts as watching: no write can fall
            // between that pass and the ones writes ask for while watching.
            group.addTask { await replayer.run(replayingFirst: true) }
            group.addTask {
              for await state in replayer.states() { continuation.yield(state) }
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

  /// Reloads the outbox after each change to the data folder, and asks for a pass when it
  /// holds more waiting writes than before (only another process adds them while this one holds
  /// the lock; this process's own passes only take away, so a stopped pass is not hurried past
  /// its backoff).
  private static func sendOthersWrites(_ replayer: OutboxReplayer, changes folder: String) async {
    var pending = replayer.state.pendingCount
    for await _ in FolderChanges.stream(folder) {
      replayer.reloadState()
      let now = replayer.state.pendingCount
      defer { pending = now }
      if now > pending { replayer.requestReplay() }
    }
  }

  func withSyncLock<T: Sendable>(
    activity: String, _ body: () async throws -> T
  ) async throws -> T {
    guard let lock else { return try await body() }
    do {
      try lock.acquire(activity: activity)
    } catch let busy as SyncInProgressError {
      replayer.reloadState()
      throw busy
    }
    defer { lock.release() }
    return try await body()
  }
}
