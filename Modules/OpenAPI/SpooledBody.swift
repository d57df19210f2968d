import CourierDomain
import CourierPorts
import CourierSystem
import OpenAPIRuntime

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

/// An `HTTPBody` read once into a `RequestBody` every attempt of a call can read again from its
/// start: in memory up to a limit, beyond it in a private temporary file, so a large body (a
/// photo in a generated multipart request, a stream of unknown length) costs the limit in
/// memory, not its size. Courier's bodies are bytes, files or segments and are read again for
/// each retry, which a single-pass `HTTPBody` stream cannot be; hence the spool (decision 2204).
struct SpooledBody: Sendable {
  /// The body to send; nil for none.
  let body: RequestBody?
  /// The temporary file holding it, when it went past the limit; removed by ``remove()``.
  let file: URL?

  /// The default limit: Courier's multipart bodies stay in memory up to 1 MiB too (decision
  /// 0301).
  static let defaultInMemoryLimit = 1 << 20

  /// Reads a body whole.
  /// - Parameters:
  ///   - body: the body; nil for none.
  ///   - inMemoryLimit: the most bytes held in memory; a longer body goes to a file.
  ///   - directory: where that file is made.
  ///   - context: the request's summary, named in errors; made only when there is a body.
  /// - Returns: the spooled body; the caller calls ``remove()`` once the call is over.
  /// - Throws: `CourierError`: `fileUnavailable` when the temporary file cannot be made or
  ///   written, `cancelled`, or what reading the body threw, wrapped (`unexpected`).
  static func read(
    _ body: HTTPBody?, inMemoryLimit: Int, directory: URL, context: @autoclosure () -> String
  ) async throws(CourierError) -> SpooledBody {
    guard let body else { return SpooledBody(body: nil, file: nil) }
    let context = context()
    var buffer = Data()
    var spool: Spool?
    if case .known(let length) = body.length {
      if length > inMemoryLimit {
        spool = try Spool(directory: directory, context: context)
      } else {
        buffer.reserveCapacity(Int(length))
      }
    }
    do {
      for try await chunk in body {
        if let spool {
          try spool.write(chunk)
        } else if buffer.count + chunk.count <= inMemoryLimit {
          buffer.append(contentsOf: chunk)
        } else {
          let file = try Spool(directory: directory, context: context)
          spool = file
          try file.write(buffer)
          buffer = Data()
          try file.write(chunk)
        }
      }
    } catch {
      spool?.remove()
      throw CourierError.wrapping(error, context: context)
    }
    guard let spool else { return SpooledBody(body: .bytes(buffer), file: nil) }
    spool.close()
    return SpooledBody(body: .file(spool.url), file: spool.url)
  }

  /// Removes the temporary file, if there is one.
  func remove() {
    if let file { unlink(file.path) }
  }
}

/// A private temporary file being written.
private final class Spool {
  let url: URL
  private let file: OpenFile
  private let context: String

  init(directory: URL, context: String) throws(CourierError) {
    // Named as Core's `CourierTemporaryFile` names a multipart body (`<kind><pid>-<uuid>.<ext>`),
    // as the URLSession adapter's spool is, so the next upload's sweep removes what a killed
    // process left here.
    let url = directory.appendingPathComponent(
      "courier-multipart-\(getpid())-\(UUID().uuidString).body")
    let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw CourierError(
        .fileUnavailable,
        serverMessage: "The temporary file for the request body couldn't be created in "
          + "\(directory.path).", underlying: String(cString: strerror(errno)), context: context)
    }
    self.url = url
    self.file = OpenFile(adopting: descriptor)
    self.context = context
  }

  func write(_ bytes: some ContiguousBytes) throws(CourierError) {
    let failure: OpenFile.Failure? = bytes.withUnsafeBytes { raw in
      do throws(OpenFile.Failure) {
        try OpenFile.writeAll(raw, to: file.descriptor)
        return nil
      } catch {
        return error
      }
    }
    guard let failure else { return }
    remove()
    throw CourierError(
      .fileUnavailable,
      serverMessage: "The temporary file for the request body couldn't be written in "
        + "\(url.deletingLastPathComponent().path).", underlying: failure.description,
      context: context)
  }

  func close() { file.close() }

  func remove() {
    file.close()
    unlink(url.path)
  }
}
