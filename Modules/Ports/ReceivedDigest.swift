import CourierDomain
import CourierSystem
import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The SHA-256 of a file built as its bytes are written (decision 2503): a transport that
/// writes a `ResponseSink` tells it where the body starts and hands it each piece after
/// writing it, so a download checks `Repr-Digest` without reading the file back.
///
/// It covers bytes `0..<count` of the file. A body that starts at `count` continues it, one
/// that starts at 0 starts it afresh, and one that starts anywhere else leaves it unusable
/// (``digest(ofLength:)`` then answers nil and the caller hashes the file itself).
package final class ReceivedDigest: Sendable, Equatable {
  private struct State {
    /// Nil while the hashing thread holds it.
    var stream: (any SHA256Stream)?
    /// Bytes written (and, inline, hashed): the file's first `count` bytes.
    var count: Int64 = 0
    /// Bytes the stream has been fed (`count` when hashed inline).
    var hashed: Int64 = 0
    var usable = true
    /// Where `append` last woke the hashing thread.
    var signalled: Int64 = 0
    var busy = false
    var stopped = false
    /// Bumped when the digest starts afresh (a body from byte 0, a prefix read from disk): the
    /// hashing thread then opens the file again, which may be another one at the same path.
    var epoch = 0
  }

  /// What the caller's thread and the hashing thread share. `@unchecked` is safe: every
  /// mutable field is inside `state`, read and written only under its `Mutex`; the two
  /// semaphores are thread-safe by design and never reassigned (`let`).
  private final class Shared: @unchecked Sendable {
    let state: Mutex<State>
    /// Wakes the hashing thread: bytes to hash, or stop.
    let work = DispatchSemaphore(value: 0)
    /// The hashing thread finished a piece.
    let progress = DispatchSemaphore(value: 0)
    init(_ state: State) { self.state = Mutex(state) }
  }

  private let hasher: any FileHasher
  private let shared: Shared
  /// The file whose written bytes a thread of the digest's own reads back from the page cache
  /// and hashes; nil: hashed inline, on the writer's thread.
  private let file: URL?
  /// How far the written bytes run ahead of the hashing thread before it is woken.
  private static let piece: Int64 = 1 << 20

  /// An empty digest.
  /// - Parameters:
  ///   - hasher: supplies the streaming SHA-256 (SHA-NI where the CPU has it).
  ///   - following: the file the transport writes: its written bytes are hashed on a thread of
  ///     the digest's own, read back from the page cache a piece at a time, so the receiving
  ///     thread only writes (decision 2508); nil to hash on the writer's thread.
  package init(hasher: any FileHasher, following file: URL? = nil) {
    self.hasher = hasher
    self.file = file
    shared = Shared(State(stream: hasher.streamingDigest()))
    if let file {
      let shared = shared
      // A thread of its own, not a GCD worker: the loop blocks for the download's whole life,
      // and GCD's pool is shared with everything else in the process.
      DetachedThread.start(name: "courier-digest") { Self.hashLoop(shared, file) }
    }
  }

  deinit {
    shared.state.withLock { $0.stopped = true }
    shared.work.signal()
  }

  /// The hashing thread: hashes what was written beyond what it hashed, until stopped. It
  /// keeps the file open and one buffer for its whole life (opening the file and allocating
  /// 1 MiB for each piece cost a thousand `openat`s per GiB, and glibc then kept the freed
  /// buffers in a growing arena: 8 MiB of private memory).
  private static func hashLoop(_ shared: Shared, _ file: URL) {
    var reader: (epoch: Int, reader: FileRangeReader)?
    while true {
      shared.work.wait()
      let job = shared.state.withLock { state -> (any SHA256Stream, Int64, Int64, Int)?? in
        if state.stopped { return .some(nil) }
        guard state.usable, state.hashed < state.count, let stream = state.stream else {
          return nil
        }
        state.stream = nil
        state.busy = true
        return (stream, state.hashed, state.count, state.epoch)
      }
      guard let job else { continue }
      guard let job else { return }
      var stream = job.0
      let (from, to, epoch) = (job.1, job.2, job.3)
      var ok = true
      do {
        if reader?.epoch != epoch { reader = (epoch, try FileRangeReader(file)) }
        try reader?.reader.read(offset: from, length: to - from) { stream.update($0) }
      } catch {
        ok = false
      }
      shared.state.withLock { state in
        state.stream = stream
        state.busy = false
        if ok { state.hashed = to } else { state.usable = false }
      }
      shared.progress.signal()
    }
  }

  /// Waits until the hashing thread has hashed every written byte (or given up), so the
  /// stream is the caller's to change.
  private func drain() {
    guard file != nil else { return }
    while true {
      let done = shared.state.withLock { !$0.busy && (!$0.usable || $0.hashed == $0.count) }
      if done { return }
      shared.work.signal()
      _ = shared.progress.wait(timeout: .now() + .milliseconds(5))
    }
  }

  /// How many leading bytes of the file the digest covers.
  package var count: Int64 { shared.state.withLock { $0.usable ? $0.count : 0 } }

  /// Makes the digest cover the file's first `length` bytes, read from disk, unless it
  /// already does: the prefix a resumed download continues.
  /// - Parameters:
  ///   - file: the partial file.
  ///   - length: its bytes to cover.
  /// - Throws: `CourierError` from reading the file (`fileUnavailable`, `cancelled`).
  package func cover(_ file: URL, length: Int64) throws {
    drain()
    if count == length { return }
    var stream = hasher.streamingDigest()
    try SwiftFileHasher.read(file, offset: 0, length: length) { stream.update($0) }
    shared.state.withLock {
      $0 = State(
        stream: stream, count: length, hashed: length, signalled: length, epoch: $0.epoch + 1)
    }
  }

  /// A body is about to be written from byte `offset` of the file.
  /// - Parameter offset: where the transport writes its first byte.
  package func begin(at offset: Int64) {
    drain()
    let fresh = offset == 0 ? hasher.streamingDigest() : nil
    shared.state.withLock { state in
      if let fresh {
        state = State(stream: fresh, epoch: state.epoch + 1)
      } else if !state.usable || state.count != offset {
        state.usable = false
      }
    }
  }

  /// Bytes the transport has just written, following the previous ones.
  /// - Parameter bytes: the bytes.
  package func append(_ bytes: UnsafeRawBufferPointer) {
    guard file != nil else {
      shared.state.withLock { state in
        guard state.usable, var stream = state.stream else { return }
        // Taken out and put back: the stream is never shared while it is updated (no copy).
        state.stream = nil
        stream.update(bytes)
        state.stream = stream
        state.count += Int64(bytes.count)
        state.hashed = state.count
      }
      return
    }
    // Written to the file already: the hashing thread reads it back, a piece at a time.
    let wake = shared.state.withLock { state -> Bool in
      guard state.usable else { return false }
      state.count += Int64(bytes.count)
      guard state.count - state.signalled >= Self.piece else { return false }
      state.signalled = state.count
      return true
    }
    if wake { shared.work.signal() }
  }

  /// The digest of the file's first `length` bytes, when it covers exactly them.
  /// - Parameter length: the file's length.
  /// - Returns: the 32-byte digest, or nil when it does not cover exactly `length` bytes.
  package func digest(ofLength length: Int64) -> [UInt8]? {
    drain()
    return shared.state.withLock { state in
      guard state.usable, state.count == length, state.hashed == length,
        var stream = state.stream
      else { return nil }
      state.usable = false
      return stream.finalize()
    }
  }

  /// Two are equal when they are the same object.
  package static func == (lhs: ReceivedDigest, rhs: ReceivedDigest) -> Bool { lhs === rhs }
}
