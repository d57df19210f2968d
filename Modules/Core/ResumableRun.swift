import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One resumable upload's record while it runs, tus or the IETF draft, saved at every change
/// that matters, and the sizing of its pieces (`UploadPieces`, decision 2704).
final class ResumableRun: Sendable {
  private struct State {
    var record: ResumableUpload
    var restarted = false
    var resumedAt: Int64?
    /// The size of the next piece.
    var pieces: UploadPieces
    /// When the record was last saved.
    var savedAt = ContinuousClock.now
    /// What a tus server offers, once its `OPTIONS` was answered in this run.
    var capabilities: Tus.Capabilities?
  }
  private let state: Mutex<State>
  let key: String
  let store: (any ResumableUploadStore)?

  /// Creates the run of `record`.
  /// - Parameters:
  ///   - record: the upload's record (its confirmed rate sizes the first piece).
  ///   - key: its key in `store`.
  ///   - store: where it is saved; nil for nowhere.
  ///   - firstPiece: the first piece when no rate was confirmed before.
  init(record: ResumableUpload, key: String, store: (any ResumableUploadStore)?, firstPiece: Int64)
  {
    state = Mutex(
      State(record: record, pieces: UploadPieces(first: firstPiece, rate: record.confirmedRate)))
    self.key = key
    self.store = store
  }

  var record: ResumableUpload { state.withLock { $0.record } }
  var resumedAt: Int64? { state.withLock { $0.resumedAt } }
  /// What a tus server offers, once known.
  var capabilities: Tus.Capabilities? {
    get { state.withLock { $0.capabilities } }
    set { state.withLock { $0.capabilities = newValue } }
  }

  /// The size of the next piece when `left` bytes remain.
  func nextPiece(left: Int64) -> Int64 { state.withLock { $0.pieces.next(left: left) } }
  /// The most bytes the server takes in one request, once known.
  var serverLimit: Int64? { state.withLock { $0.pieces.serverLimit } }

  /// Changes the sizing (a confirmed piece, a cut one, a limit).
  func pieces(_ change: (inout UploadPieces) -> Void) {
    state.withLock {
      change(&$0.pieces)
      $0.record.confirmedRate = $0.pieces.rate
    }
  }

  func save() throws {
    guard let store else { return }
    do {
      try store.save(record, as: key)
    } catch {
      throw CourierError(
        .localStore, code: "upload_state_unwritable",
        serverMessage: "The upload's resume state couldn't be saved in the data folder.",
        underlying: String(describing: error))
    }
  }

  /// Changes the record without saving it (what the next save will keep).
  func note(_ change: (inout ResumableUpload) -> Void) {
    state.withLock { change(&$0.record) }
  }

  func update(_ change: (inout ResumableUpload) -> Void) throws {
    state.withLock { change(&$0.record) }
    try save()
    noteSaved()
  }

  /// Notes a confirmed offset; saves it at most every 2 s. The saved offset is only where a
  /// `HEAD` is expected to be at least (and what `courier outbox` shows): the server's answer
  /// is the truth, so a saved offset behind it costs nothing, while a durable save per chunk
  /// (two fsyncs) cost a fast link more than half its throughput.
  func confirmed(_ offset: Int64) throws {
    let due = state.withLock { state -> Bool in
      state.record.confirmedOffset = offset
      return state.savedAt.duration(to: .now) >= .seconds(2)
    }
    if due {
      try save()
      noteSaved()
    }
  }

  private func noteSaved() {
    state.withLock { $0.savedAt = .now }
  }

  /// Notes where an attempt started sending: the last one counts, so the result says where
  /// the transfer that completed the upload resumed.
  func started(at offset: Int64) {
    state.withLock { $0.resumedAt = offset }
  }

  /// A new upload, once: false when one was already started over.
  func restart() throws -> Bool {
    let first = state.withLock { state -> Bool in
      guard !state.restarted else { return false }
      state.restarted = true
      state.record.uploadURL = nil
      state.record.confirmedOffset = 0
      state.record.idempotencyKey = UUID().uuidString.lowercased()
      state.resumedAt = nil
      return true
    }
    if first { try save() }
    return first
  }

  func finish() { store?.remove(key) }
}
