import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An image compressor that answers from a script, for unit tests of code that compresses.
/// `inspect` returns the scripted header (with the file's real size) or fails with
/// `not_an_image`; `compress` writes the scripted bytes or fails with the scripted error.
public final class InMemoryImageCompressor: ImageCompressor {
  /// What `compress` does.
  package enum Behavior: Sendable {
    /// Writes these bytes as the output.
    case produce(Data)
    /// Fails with this error and writes nothing.
    case fail(CourierError)
    /// Waits on `gate` (for cancellation tests) and then writes these bytes.
    case wait(AsyncStream<Void>, then: Data)
  }

  private struct State {
    var inspected: [URL] = []
    var compressed: [(input: URL, output: URL)] = []
  }

  private let info: ImageInfo?
  private let behavior: Behavior
  private let state = Mutex(State())

  /// Creates a compressor that reports `info` for every image and writes a few bytes as each
  /// compressed file.
  /// - Parameter info: the header every image reports; nil makes every file "not an image".
  public convenience init(info: ImageInfo?) {
    self.init(info: info, behavior: .produce(Data("compressed".utf8)))
  }

  /// Creates a compressor.
  /// - Parameters:
  ///   - info: the header every image reports; nil makes every file "not an image".
  ///   - behavior: what `compress` does.
  package init(info: ImageInfo?, behavior: Behavior) {
    self.info = info
    self.behavior = behavior
  }

  /// The files inspected, in order.
  package var inspectedFiles: [URL] { state.withLock { $0.inspected } }

  /// The number of `compress` calls.
  package var compressCount: Int { state.withLock { $0.compressed.count } }

  /// The output files `compress` was asked to write, in order.
  package var outputFiles: [URL] { state.withLock { $0.compressed.map(\.output) } }

  /// Returns the scripted header with the file's real size.
  /// - Parameter input: the file.
  /// - Returns: the header.
  /// - Throws: `fileUnavailable` when the file is missing; `invalidInput` `not_an_image` when
  ///   no header is scripted.
  public func inspect(_ input: URL) async throws -> ImageInfo {
    state.withLock { $0.inspected.append(input) }
    let size = try Self.size(of: input)
    guard var info else {
      throw CourierError(
        .invalidInput, code: CourierError.notAnImageCode,
        serverMessage: "\(input.lastPathComponent) is not an image.", context: input.path)
    }
    info.byteCount = size
    return info
  }

  /// Writes the scripted bytes to `output`.
  /// - Parameters:
  ///   - input: the image.
  ///   - output: where to write.
  ///   - options: the options (the output's dimensions are clamped to `maxLongEdge`).
  /// - Returns: the result.
  /// - Throws: the scripted error; `cancelled` when the task is cancelled.
  public func compress(input: URL, output: URL, options: CompressionOptions) async throws
    -> CompressionResult
  {
    state.withLock { $0.compressed.append((input, output)) }
    let header = try await inspect(input)
    let data: Data
    switch behavior {
    case .produce(let bytes):
      data = bytes
    case .fail(let error):
      throw error
    case .wait(let gate, let bytes):
      for await _ in gate { break }
      data = bytes
    }
    if Task.isCancelled { throw CourierError(.cancelled, context: input.path) }
    do {
      try data.write(to: output)
    } catch {
      throw CourierError(
        .fileUnavailable, underlying: String(describing: error), context: output.path)
    }
    let scale = min(1, Double(options.maxLongEdge) / Double(max(1, header.longEdge)))
    return CompressionResult(
      outputSize: Int64(data.count), width: Int(Double(header.width) * scale),
      height: Int(Double(header.height) * scale), inputSize: header.byteCount,
      orientationApplied: header.orientation != 1, input: header)
  }

  private static func size(of url: URL) throws -> Int64 {
    var info = stat()
    guard stat(url.path, &info) == 0 else {
      throw CourierError(
        .fileUnavailable, serverMessage: "The file \(url.lastPathComponent) couldn't be read.",
        context: url.path)
    }
    return Int64(info.st_size)
  }
}
