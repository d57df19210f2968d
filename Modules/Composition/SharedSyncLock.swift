import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

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
