import CourierDomain
import CourierPorts
import CourierSystem
import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Materialises a `MultipartBodyLayout` into bytes: in memory below a threshold, otherwise
/// into a temporary file written in fixed-size chunks, so memory stays flat whatever the size
/// of the files. The temporary file is removed on failure and on cancellation; on success the
/// returned `MultipartBody` owns it.
package struct MultipartBodyWriter: Sendable {
  /// The default chunk size: 256 KiB (see Docs/benchmarks/upload.md).
  package static let defaultChunkSize = 256 * 1024
  /// The default in-memory threshold: 1 MiB (see Docs/benchmarks/upload.md and
  /// Docs/decisions/0301).
  package static let defaultInMemoryThreshold: Int64 = 1 << 20

  /// The size of each read and write, clamped to 64 KiB...1 MiB.
  package let chunkSize: Int
  /// Bodies up to this length stay in memory; longer ones go to a temporary file.
  package let inMemoryThreshold: Int64
  /// Where temporary files are created.
  package let directory: URL

  /// Creates a writer.
  /// - Parameters:
  ///   - directory: where temporary files go (the system's temporary directory by default).
  ///   - chunkSize: the chunk size, clamped to 64 KiB...1 MiB.
  ///   - inMemoryThreshold: the largest body kept in memory (0 to always use a file).
  package init(
    directory: URL = FileManager.default.temporaryDirectory,
    chunkSize: Int = MultipartBodyWriter.defaultChunkSize,
    inMemoryThreshold: Int64 = MultipartBodyWriter.defaultInMemoryThreshold
  ) {
    self.directory = directory
    self.chunkSize = min(max(chunkSize, 64 * 1024), 1 << 20)
    self.inMemoryThreshold = max(0, inMemoryThreshold)
  }

  /// Builds the body: in memory when it is no longer than `inMemoryThreshold`, otherwise in a
  /// new temporary file in `directory`.
  /// - Parameter layout: the body's layout.
  /// - Returns: the body; call `remove()` on it when done.
  /// - Throws: `CourierError` `fileUnavailable` naming the file when a part's file is missing,
  ///   unreadable or changed size; `cancelled` when the task is cancelled. Nothing is left on
  ///   disk when it throws.
  package func makeBody(_ layout: MultipartBodyLayout) async throws -> MultipartBody {
    if layout.contentLength <= inMemoryThreshold {
      let data = try await run { isCancelled in try self.collect(layout, isCancelled: isCancelled) }
      return MultipartBody(
        storage: .memory(data), contentType: layout.contentType,
        contentLength: layout.contentLength)
    }
    let url = CourierTemporaryFile.make("courier-multipart-", ext: "body", in: directory)
    try await writeFile(layout, to: url)
    return MultipartBody(
      storage: .file(url), contentType: layout.contentType, contentLength: layout.contentLength)
  }

  /// Builds the body, runs `operation` with it, then removes any temporary file, whether the
  /// operation returned, threw or was cancelled.
  /// - Parameters:
  ///   - layout: the body's layout.
  ///   - operation: what to do with the body (typically send it).
  /// - Returns: what `operation` returned.
  /// - Throws: what `makeBody` or `operation` threw.
  package func withBody<Result: Sendable>(
    _ layout: MultipartBodyLayout,
    _ operation: (MultipartBody) async throws -> Result
  ) async throws -> Result {
    let body = try await makeBody(layout)
    defer { body.remove() }
    return try await operation(body)
  }

  /// Writes the whole body into a new file at `url` (which must not exist).
  /// - Parameters:
  ///   - layout: the body's layout.
  ///   - url: the file to create, with permissions 0600.
  /// - Throws: `CourierError` (`fileUnavailable`, `cancelled`); the file is removed then.
  package func writeFile(_ layout: MultipartBodyLayout, to url: URL) async throws {
    try await run { isCancelled in
      try self.writeFileSynchronously(layout, to: url, isCancelled: isCancelled)
    }
  }

  /// Writes the body into a new file, blocking the calling thread; for benchmarks and other
  /// synchronous callers.
  /// - Parameters:
  ///   - layout: the body's layout.
  ///   - url: the file to create.
  ///   - isCancelled: polled between chunks; `true` stops the write.
  /// - Throws: `CourierError`; the file is removed then.
  package func writeFileSynchronously(
    _ layout: MultipartBodyLayout, to url: URL, isCancelled: () -> Bool = { false }
  ) throws {
    guard
      FileManager.default.createFile(
        atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
    else {
      throw CourierError(
        .fileUnavailable, code: "multipart_body_unwritable",
        serverMessage: "The temporary file for the upload couldn't be created in "
          + "\(url.deletingLastPathComponent().path).",
        context: "multipart body \(url.path)")
    }
    do {
      let output = try OpenFile.writing(url.path)
      try emit(layout, isCancelled: isCancelled) { try output.write(contentsOf: $0) }
      let written = try output.offset()
      guard written == UInt64(layout.contentLength) else {
        throw CourierError(
          .fileUnavailable, code: "multipart_body_length",
          serverMessage: "The upload body came out at \(written) bytes instead of "
            + "\(layout.contentLength).",
          context: "multipart body \(url.path)")
      }
    } catch {
      try? FileManager.default.removeItem(at: url)
      throw Self.wrap(error, context: "multipart body \(url.path)")
    }
  }

  func collect(_ layout: MultipartBodyLayout, isCancelled: () -> Bool) throws -> Data {
    var data = Data()
    data.reserveCapacity(Int(layout.contentLength))
    try emit(layout, isCancelled: isCancelled) { data.append($0) }
    return data
  }

  /// Feeds every segment's bytes, in chunks for files, to `sink`.
  func emit(
    _ layout: MultipartBodyLayout, isCancelled: () -> Bool, sink: (Data) throws -> Void
  ) throws {
    for segment in layout.segments {
      if isCancelled() { throw CourierError(.cancelled, context: "multipart body") }
      switch segment {
      case .bytes(let data):
        try sink(data)
      case .file(let url, let offset, let length, let fileSize):
        try copy(
          url, offset: offset, length: length, fileSize: fileSize, isCancelled: isCancelled,
          sink: sink)
      }
    }
  }

  private func copy(
    _ url: URL, offset: Int64, length: Int64, fileSize: Int64, isCancelled: () -> Bool,
    sink: (Data) throws -> Void
  ) throws {
    func changed(_ detail: String) -> CourierError {
      CourierError(
        .fileUnavailable, code: "file_changed",
        serverMessage: "The file \(url.lastPathComponent) changed while it was being prepared "
          + "for upload (\(detail)). Please try again.",
        context: url.path)
    }
    let input: OpenFile
    do {
      input = try OpenFile.reading(url.path)
    } catch {
      throw CourierError(
        .fileUnavailable, code: "file_unreadable",
        serverMessage: "The file \(url.lastPathComponent) couldn't be read.",
        underlying: String(describing: error), context: url.path)
    }
    let sizeNow = Int64(try input.seekToEnd())
    guard sizeNow == fileSize else { throw changed("\(fileSize) bytes became \(sizeNow)") }
    try input.seek(toOffset: UInt64(offset))
    var remaining = length
    while remaining > 0 {
      if isCancelled() { throw CourierError(.cancelled, context: url.path) }
      let want = Int(min(Int64(chunkSize), remaining))
      let chunk = try input.read(upToCount: want)
      guard !chunk.isEmpty else {
        throw changed("it ended \(remaining) bytes early")
      }
      try sink(chunk)
      remaining -= Int64(chunk.count)
    }
  }

  /// Runs blocking file work on a Dispatch queue, off the cooperative pool, and turns task
  /// cancellation into a flag the work polls between chunks.
  private func run<T: Sendable>(_ work: @escaping @Sendable (() -> Bool) throws -> T)
    async throws -> T
  {
    let cancelled = CancellationFlag()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .utility).async {
          continuation.resume(with: Result { try work { cancelled.isSet } })
        }
      }
    } onCancel: {
      cancelled.set()
    }
  }

  static func wrap(_ error: any Error, context: String) -> CourierError {
    if let error = error as? CourierError { return error }
    return CourierError(
      .fileUnavailable, code: "multipart_body_unwritable",
      serverMessage: "The upload body couldn't be written to a temporary file.",
      underlying: String(describing: error), context: context)
  }
}

/// A flag set by a cancellation handler and polled by blocking work on another thread.
private final class CancellationFlag: Sendable {
  private let flag = Atomic<Bool>(false)

  var isSet: Bool { flag.load(ordering: .acquiring) }

  func set() { flag.store(true, ordering: .releasing) }
}
