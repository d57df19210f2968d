import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// A finished download: where the file is and what the server said it was, for the caller to
/// show or to hand to a cache (decision 2501).
package struct DownloadResult: Sendable, Equatable {
  /// The file, renamed into place.
  package var file: URL
  /// Its length in bytes.
  package var size: Int64
  /// The server's `ETag`, as sent.
  package var etag: String?
  /// The server's `Last-Modified`, as sent.
  package var lastModified: String?
  /// The final reply's `Cache-Control`, as sent (`public` lets a cached copy outlive a login,
  /// decision 2505).
  package var cacheControl: String?
  /// The SHA-256 of the file, hex, when the server sent a `Repr-Digest` and the file matched
  /// it; nil when the server sent none (the file is then not hashed).
  package var sha256: String?
  /// The byte the last request started from: 0 for a download from scratch.
  package var resumedFrom: Int64
  /// The body bytes this call received (what it cost on the wire, heads aside).
  package var received: Int64

  /// Makes a result (a downloader's, or a kept copy's that needed no download).
  package init(
    file: URL, size: Int64, etag: String?, lastModified: String?, cacheControl: String?,
    sha256: String?, resumedFrom: Int64, received: Int64
  ) {
    self.file = file
    self.size = size
    self.etag = etag
    self.lastModified = lastModified
    self.cacheControl = cacheControl
    self.sha256 = sha256
    self.resumedFrom = resumedFrom
    self.received = received
  }
}

/// Downloads a URL into a file that survives kills and dropped links (decision 2501): the
/// body is written as it arrives to a partial file beside the destination, with a sidecar
/// (URL, validators, length, digest) in `stateDirectory`; a later call continues it with
/// `Range` + `If-Range`, starts again when the server's representation changed, checks the
/// whole file against `Repr-Digest` when the server sends one (hashed as it arrives, decision
/// 2503), and renames it into place
/// atomically (fsync the file, rename, fsync the folder).
package struct Downloader: Sendable {
  /// The pipeline requests go through (auth, retries, logging, the adapter).
  package let transport: any Transport
  /// The pipeline's options (deadline, logger); the sink and progress are set per call.
  package let options: TransportOptions
  /// Where sidecars live (`<data>/downloads/.state`).
  package let stateDirectory: URL
  /// Supplies the streaming SHA-256 a body is hashed with as it arrives when the server
  /// announced a digest, and hashes a file whose digest could not be followed.
  package let hasher: any FileHasher
  /// How many times one call continues after a dropped link or a reply cut short before it
  /// gives up (the partial file stays for the next call).
  package var resumesPerCall = 3

  /// Creates a downloader.
  /// - Parameters:
  ///   - transport: the pipeline.
  ///   - options: the pipeline's options.
  ///   - stateDirectory: where sidecars live.
  ///   - hasher: the SHA-256 of a file.
  package init(
    transport: any Transport, options: TransportOptions, stateDirectory: URL,
    hasher: any FileHasher
  ) {
    self.transport = transport
    self.options = options
    self.stateDirectory = stateDirectory
    self.hasher = hasher
  }

  /// Downloads `url` into `destination`, continuing a partial download of the same URL into
  /// the same file.
  /// - Parameters:
  ///   - url: the URL.
  ///   - destination: the file to create or replace.
  ///   - progress: bytes of the whole file present so far, and its length when known.
  ///   - admit: told the bytes still to fetch (nil when the server did not say) once the
  ///     `HEAD` answered, before any body is asked for; it throws to stop there (the path
  ///     policy holding a large download back on a metered path, decision 2610).
  /// - Returns: the result.
  /// - Throws: `CourierError`: the server's refusal as classified; `invalidResponse` for a
  ///   206 that does not continue the file (`reply_content_range_mismatch`), a file whose
  ///   digest does not match (`download_digest_mismatch`; the partial file is deleted, nothing
  ///   is renamed) or a length that does not match (`download_length_mismatch`);
  ///   `fileUnavailable` when the files cannot be written; a transport failure once the
  ///   resumes are spent (the partial file stays).
  package func download(
    _ url: URL, to destination: URL,
    progress: (@Sendable (TransferProgress) -> Void)? = nil,
    admit: ((Int64?) throws -> Void)? = nil
  ) async throws -> DownloadResult {
    let context = "GET \(url.path)"
    let folder = destination.deletingLastPathComponent()
    try Self.makeDirectory(folder, context: context)
    try Self.makeDirectory(stateDirectory, context: context)
    let partial = folder.appendingPathComponent(".\(destination.lastPathComponent).courier-partial")
    let sidecar = stateDirectory.appendingPathComponent(Self.stateKey(url, destination) + ".json")

    var record = Self.readRecord(sidecar).flatMap {
      $0.url == url.absoluteString && $0.partial == partial.path ? $0 : nil
    }
    // A partial file without its sidecar cannot be trusted: its bytes' version is unknown.
    var have: Int64 = record == nil ? 0 : Self.size(of: partial) ?? 0
    if record == nil { unlink(partial.path) }

    // The current validators first, written to the sidecar before any byte of a body.
    let head = try await send(HTTPRequest(checking: url, method: .head), sink: nil)
    if head.0.status.kind == .successful {
      let current = DownloadRecord(head.0, url: url.absoluteString, partial: partial.path)
      if let old = record, !old.sameRepresentation(as: current) { have = 0 }
      record = current
      try Self.write(current, to: sidecar, context: context)
    } else {
      have = 0
    }
    try admit?(record?.length.map { max(0, $0 - have) })

    // Hashed as the bytes arrive when the server announced a digest, on a thread of its own
    // reading them back from the page cache (decision 2508): the file is not read back at the
    // end, only a resumed prefix once, before its first request.
    let followed =
      record?.digest == nil ? nil : ReceivedDigest(hasher: hasher, following: partial)
    var resumes = 0
    var restartedAfter416 = false
    var received: Int64 = 0
    while true {
      var request = try HTTPRequest(checking: url, method: .get)
      // Ranges count the bytes as sent: a compressed body could not be continued.
      request.headerFields[.acceptEncoding] = "identity"
      if have > 0, let record, let validator = DownloadResume.ifRange(for: record) {
        request.headerFields[.range] = "bytes=\(have)-"
        request.headerFields[.ifRange] = validator
      } else {
        have = 0
      }
      if let followed, have > 0 {
        do {
          try followed.cover(partial, length: have)
        } catch {
          throw CourierError.wrapping(error, context: context)
        }
      }
      let expected = record?.length
      let start = have
      let answer: (HTTPResponse, ResponseBody)
      do {
        answer = try await send(
          request, sink: ResponseSink(file: partial, offset: have, digest: followed),
          progress: progress.map { report in
            { @Sendable step in
              // A 206 brings the rest: what was there comes first.
              let base = step.total > 0 ? expected.map { max(0, $0 - step.total) } ?? 0 : start
              report(TransferProgress(sent: base + step.sent, total: base + step.total))
            }
          })
      } catch let failure as CourierError
        where (failure.isTransient || failure.isTruncatedReply) && failure.kind != .cancelled
        && resumes < resumesPerCall
      {
        resumes += 1
        received += max(0, (Self.size(of: partial) ?? 0) - have)
        have = Self.size(of: partial) ?? 0
        continue
      }
      let (response, body) = answer
      received += body.count
      switch response.status.code {
      case 206:
        break
      case 200...299:
        // The whole representation from byte 0: its head is the record now.
        let fresh = DownloadRecord(response, url: url.absoluteString, partial: partial.path)
        record = fresh
        try Self.write(fresh, to: sidecar, context: context)
        have = 0
      case 416 where have > 0 && expected == have:
        break  // everything was there already
      case 416 where !restartedAfter416:
        restartedAfter416 = true
        unlink(partial.path)
        have = 0
        continue
      default:
        throw ResponseClassifier.classify(
          response, body: body.bytes, attempts: 1, context: context)
          ?? CourierError(
            .invalidResponse, status: response.status.code, code: "download_unexpected_status",
            mayHaveReachedServer: true,
            underlying: "a download answered \(response.status.code)", context: context)
      }
      let resumedFrom = have
      let size = Self.size(of: partial) ?? 0
      // The record as the final reply left it (a 200 replaced it).
      if let expected = record?.length, size != expected {
        throw CourierError(
          .invalidResponse, code: "download_length_mismatch",
          serverMessage:
            "The downloaded file is not as long as the server announced; it was kept to "
            + "continue the next time.",
          mayHaveReachedServer: true,
          underlying: "the file has \(size) bytes where the server announced \(expected)",
          context: context)
      }
      let digest =
        response.headerFields[.reprDigest].flatMap(DownloadResume.sha256(reprDigest:))
        ?? record?.digest.flatMap { Data(base64Encoded: $0) }.map { Array($0) }
      var hex: String?
      if let digest {
        let actual =
          try followed?.digest(ofLength: size)
          ?? hasher.sha256(of: partial, offset: 0, length: size)
        guard actual == digest else {
          unlink(partial.path)
          unlink(sidecar.path)
          throw CourierError(
            .invalidResponse, code: "download_digest_mismatch",
            serverMessage:
              "The downloaded file does not match the digest the server sent (Repr-Digest); "
              + "it was deleted and nothing was saved.",
            mayHaveReachedServer: true,
            underlying:
              "sha-256 \(Data(actual).base64EncodedString()) where the server sent "
              + Data(digest).base64EncodedString(),
            context: context)
        }
        hex = SHA256.hex(actual)
      }
      try Self.moveIntoPlace(partial, destination, context: context)
      unlink(sidecar.path)
      return DownloadResult(
        file: destination, size: size,
        etag: response.headerFields[.eTag] ?? record?.etag,
        lastModified: response.headerFields[.lastModified] ?? record?.lastModified,
        cacheControl: response.headerFields[.cacheControl], sha256: hex, resumedFrom: resumedFrom,
        received: received)
    }
  }

  private func send(
    _ request: HTTPRequest, sink: ResponseSink?,
    progress: (@Sendable (TransferProgress) -> Void)? = nil
  ) async throws -> (HTTPResponse, ResponseBody) {
    var callOptions = options.boundedByProgress()
    callOptions.responseSink = sink
    callOptions.progress = progress
    do {
      return try await transport.send(request, body: nil, options: callOptions)
    } catch {
      var failure = CourierError.wrapping(error, context: request.summary)
      if failure.context == nil { failure.context = request.summary }
      throw failure
    }
  }

  // MARK: files

  private static func size(of file: URL) -> Int64? {
    var info = stat()
    guard stat(file.path, &info) == 0 else { return nil }
    return Int64(info.st_size)
  }

  private static func makeDirectory(_ folder: URL, context: String) throws {
    do {
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    } catch {
      throw CourierError(
        .fileUnavailable,
        serverMessage: "The folder \(folder.path) can't be created.",
        underlying: String(describing: error), context: context)
    }
  }

  /// The name of the files a download of `url` into `destination` keeps in the state folder
  /// (its sidecar, and the lock of decision 2517): the SHA-256 of both, in hex.
  /// - Parameters:
  ///   - url: the URL.
  ///   - destination: where the file goes.
  /// - Returns: the name, without an extension.
  package static func stateKey(_ url: URL, _ destination: URL) -> String {
    SHA256.hex(SHA256.hash(Data((url.absoluteString + "\n" + destination.path).utf8)))
  }

  private static func readRecord(_ sidecar: URL) -> DownloadRecord? {
    guard let file = try? OpenFile.reading(sidecar.path),
      let data = try? file.read(upToCount: 64 << 10)
    else { return nil }
    return try? JSONDecoder().decode(DownloadRecord.self, from: data)
  }

  /// Writes the sidecar beside itself and renames it over the old one: a kill leaves the old
  /// record or the new, never half of one.
  private static func write(_ record: DownloadRecord, to sidecar: URL, context: String) throws {
    let temporary = sidecar.appendingPathExtension("new")
    do {
      let data = try JSONEncoder().encode(record)
      let file = try OpenFile.writing(temporary.path, truncatingAt: 0)
      try file.write(contentsOf: data)
      file.close()
      guard rename(temporary.path, sidecar.path) == 0 else {
        throw OpenFile.Failure(operation: "rename", code: errno)
      }
    } catch {
      throw CourierError(
        .fileUnavailable, serverMessage: "The file \(sidecar.path) can't be written.",
        underlying: String(describing: error), context: context)
    }
  }

  /// fsync the file, rename it over the destination, fsync the folder: after a power cut the
  /// destination is the old file or the whole new one.
  private static func moveIntoPlace(_ partial: URL, _ destination: URL, context: String) throws {
    do {
      let file = try OpenFile.reading(partial.path)
      try file.synchronize()
      file.close()
      guard rename(partial.path, destination.path) == 0 else {
        throw OpenFile.Failure(operation: "rename", code: errno)
      }
      let folder = try OpenFile.reading(destination.deletingLastPathComponent().path)
      try folder.synchronize()
      folder.close()
    } catch {
      throw CourierError(
        .fileUnavailable, serverMessage: "The file \(destination.path) can't be written.",
        underlying: String(describing: error), context: context)
    }
  }
}
