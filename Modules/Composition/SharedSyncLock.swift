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

  /// Takes the lock, or joins this process's hold of it, waiting as long as another process
  /// holds it (a long-running command beside a one-shot one, decision 2426). The lock file is
  /// opened once and tried again on the same descriptor, after a wait that doubles from 50 ms
  /// to half a second: a try closes nothing, so the holder's watch of the folder is not woken.
  /// - Parameters:
  ///   - activity: what this process is about to do, for another's message.
  ///   - onHeld: told who holds the lock, first when the wait starts and again when the holder
  ///     changes.
  /// - Throws: `CancellationError` when the task is cancelled while waiting; `StoreError` when
  ///   the lock file cannot be opened.
  func acquireWaiting(
    activity: String, onHeld: @Sendable (SyncLock.Holder) -> Void
  ) async throws {
    var file: SyncLock.File?
    var told: SyncLock.Holder?
    var pause = Duration.milliseconds(50)
    while true {
      try Task.checkCancellation()
      let held = try state.withLock { state -> SyncLock.Holder? in
        if state.holders == 0 {
          let opened = try file ?? SyncLock.File(in: directory)
          file = opened
          switch try opened.take(activity: activity) {
          case .acquired(let lock): state.lock = lock
          case .held(let holder): return holder
          }
        }
        state.holders += 1
        return nil
      }
      guard let held else { return }
      if held != told {
        told = held
        onHeld(held)
      }
      try await Task.sleep(for: pause)
      pause = min(pause * 2, .milliseconds(500))
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
