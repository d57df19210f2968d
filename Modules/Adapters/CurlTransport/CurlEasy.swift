import CCurl
import CCurlShim
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

/// One easy handle and everything its callbacks touch: the body's reader, the response's
/// headers and body, the file it may be written to. Confined to the transport's thread; libcurl
/// gets an unretained pointer to it, kept alive by the loop's table until `cleanup()`.
final class CurlEasy {
  let transfer: Transfer
  let handle: UnsafeMutableRawPointer
  private let maxResponseBytes: Int
  let errorBuffer: UnsafeMutablePointer<CChar>
  var headerList: UnsafeMutablePointer<curl_slist>?
  var reader: BodyReader?
  /// The final response's fields as received; checked into `HTTPFields` at the end.
  private var fields: [(name: String, value: String)] = []
  /// The trailer section's fields as received (after the body), kept apart from `fields`
  /// (RFC 9110 §6.5.1); nil until one comes.
  private var trailers: [(name: String, value: String)]?
  /// Where the header callback is in the reply: libcurl hands it the heads' lines and, after
  /// the body, the trailer section's.
  private var headState = HeadState.awaitingStatus
  /// Whether a byte of the body has come.
  private var bodyStarted = false
  private var body = Data()
  private var output: (fd: Int32, temporary: URL, destination: URL)?
  /// The caller's sink, once the final head said the body goes there: the open file, where the
  /// next byte goes, and how many this reply wrote.
  private var sinkOutput:
    (
      fd: Int32, file: URL, start: Int64, position: Int64, written: Int64,
      digest: ReceivedDigest?, flushed: Int64
    )?
  private var localFailure: CourierError?
  private var reported: Int64 = -1
  /// When a byte last moved either way (or the transfer began), for the idle timeout.
  private(set) var lastActivity = ContinuousClock.now
  private var moved: (up: Int64, down: Int64) = (0, 0)
  /// Set when the transport's thread ends the transfer for its idle timeout.
  var idleExpired = false

  /// When the idle timeout passes unless something moves first; nil without one.
  var idleDeadline: ContinuousClock.Instant? {
    transfer.idleTimeout.map { lastActivity + $0 }
  }

  /// Creates and configures a handle for a transfer.
  /// - Throws: `CourierError` when libcurl refuses an option or the output file can't be made.
  init(_ transfer: Transfer, configuration: CurlTransport.Configuration) throws(CourierError) {
    _ = curlGlobalInit
    guard let handle = curl_easy_init() else {
      let reason = courier_curl_load_error().map {
        "libcurl (libcurl.so.4) could not be loaded: \(String(cString: $0)). Install it "
          + "(Debian: apt install libcurl4) or choose the urlsession transport."
      }
      throw CourierError(
        .connectionLost, underlying: reason ?? "curl_easy_init failed", context: transfer.context)
    }
    self.transfer = transfer
    self.handle = handle
    self.maxResponseBytes = configuration.maxResponseBytes
    self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    do {
      try configure(configuration)
    } catch {
      cleanup()
      throw error
    }
  }

  func openOutput(_ destination: URL) throws(CourierError) {
    let temporary = destination.deletingLastPathComponent().appendingPathComponent(
      ".\(destination.lastPathComponent).courier-partial-\(getpid())")
    let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      throw CourierError(
        .fileUnavailable,
        serverMessage:
          "The file \(destination.path) can't be written (\(String(cString: strerror(errno)))).",
        context: transfer.context)
    }
    output = (fd, temporary, destination)
  }

  /// Opens the caller's file when the final head sends the body there (decision 2500): from
  /// byte 0 for a 200, from the 206's first byte (which must be the sink's offset), truncated
  /// there so no older byte past it survives.
  private func openSink(_ sink: ResponseSink, status: Int) throws(CourierError) {
    let head = try HTTPResponse(receivedStatus: status, fields: fields, context: transfer.context)
    guard let start = try sink.placement(for: head, context: transfer.context) else { return }
    let fd = open(sink.file.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0, ftruncate(fd, off_t(start)) == 0 else {
      let reason = String(cString: strerror(errno))
      if fd >= 0 { Glibc.close(fd) }
      throw CourierError(
        .fileUnavailable,
        serverMessage: "The file \(sink.file.path) can't be written (\(reason)).",
        mayHaveReachedServer: true, context: transfer.context)
    }
    sink.digest?.begin(at: start)
    sinkOutput = (fd, sink.file, start, start, 0, sink.digest, start)
  }

  /// How much of a sink's file is written before the disk is asked to start on it.
  private static let writeBehind: Int64 = 8 << 20

  /// Asks the kernel to start writing a written range of the file to the disk, without waiting
  /// for it (decision 2518): the fsync before the download's rename then waits for the last few
  /// MiB, not for the whole file, which the disk would otherwise only start on at that fsync.
  private static func startWriteback(_ fd: Int32, from: Int64, to: Int64) {
    _ = courier_start_writeback(fd, from, to - from)
  }

  // MARK: callbacks, on the transport's thread

  func send(_ buffer: UnsafeMutableRawPointer, _ capacity: Int) -> Int {
    guard let reader, let count = reader.read(into: buffer, capacity: capacity) else {
      return courier_curl_readfunc_abort
    }
    return count
  }

  func rewind(to offset: Int64) -> Int32 {
    guard let reader, reader.seek(to: offset) else { return 1 }  // CURL_SEEKFUNC_FAIL
    return 0  // CURL_SEEKFUNC_OK
  }

  /// Where the header callback is in a reply.
  enum HeadState {
    /// A head's first line is due: the reply's, or the next after an interim 1xx.
    case awaitingStatus
    /// In a head, after its status line.
    case inHead(code: Int)
    /// After the final head: a field is a trailer, a status line starts another reply (a
    /// proxy's `CONNECT` answer comes before the server's).
    case afterHead
  }

  func header(_ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    lastActivity = .now
    let bytes = UnsafeRawBufferPointer(start: buffer, count: count)
    switch (Self.headerLine(bytes), headState) {
    case (.status(let code), _):
      // A new head (after a 100 Continue, or a proxy's answer): only the final one's fields.
      fields.removeAll()
      trailers = nil
      headState = .inHead(code: code)
    case (.field(let name, let value), .inHead):
      fields.append((name: name, value: value))
    case (.field(let name, let value), .afterHead):
      var section = trailers ?? []
      section.append((name: name, value: value))
      trailers = section
    case (.end, .inHead(let code)):
      headState = (100..<200).contains(code) ? .awaitingStatus : .afterHead
      if (101..<200).contains(code), let observer = transfer.informational,
        let interim = try? HTTPResponse(
          receivedStatus: code, fields: fields, context: transfer.context)
      {
        // An interim answer is heard as it arrives (a 104's upload address, decision 2702);
        // one whose fields cannot be held is dropped, as libcurl drops its body-less head.
        observer(interim)
      }
      if case .sink(let sink) = transfer.sink, !(100..<200).contains(code) {
        do throws(CourierError) {
          try openSink(sink, status: code)
        } catch {
          localFailure = error
          return 0
        }
      }
    case (.end, .afterHead), (.other, .inHead):
      break
    case (.other, .afterHead) where bodyStarted || trailers != nil:
      break
    case (.field, .awaitingStatus), (.end, .awaitingStatus), (.other, _):
      // Not a status line where one is due (`Http/1.1 200 OK`): not HTTP (decision 2434).
      localFailure = .statusLineInvalid(
        String(decoding: bytes, as: UTF8.self).trimmingWhitespaceAndNewlines(),
        context: transfer.context)
      return 0
    }
    return count
  }

  /// One line of a response head; see `CurlHeaderLine`.
  typealias HeaderLine = CurlHeaderLine

  /// Classifies a head line; see `CurlHeaderLine.init(_:)`.
  /// - Parameter bytes: the line.
  /// - Returns: what it is.
  static func headerLine(_ bytes: UnsafeRawBufferPointer) -> HeaderLine { HeaderLine(bytes) }

  func receive(_ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    bodyStarted = true
    if var sink = sinkOutput {
      // Straight from libcurl's buffer to the file: no copy, no allocation.
      var done = 0
      while done < count {
        let result = pwrite(sink.fd, buffer + done, count - done, off_t(sink.position))
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else {
          localFailure = CourierError(
            .fileUnavailable,
            serverMessage:
              "The file \(sink.file.path) can't be written (\(String(cString: strerror(errno)))).",
            mayHaveReachedServer: true, context: transfer.context)
          return 0
        }
        done += result
        sink.position += Int64(result)
        sink.written += Int64(result)
      }
      // Hashed while the bytes are in the cache, so the file is never read back for its digest.
      sink.digest?.append(UnsafeRawBufferPointer(start: buffer, count: count))
      if sink.position - sink.flushed >= Self.writeBehind {
        Self.startWriteback(sink.fd, from: sink.flushed, to: sink.position)
        sink.flushed = sink.position
      }
      sinkOutput = sink
      return count
    }
    if let output {
      var written = 0
      while written < count {
        let result = write(output.fd, buffer + written, count - written)
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else {
          localFailure = CourierError(
            .fileUnavailable,
            serverMessage:
              "The file \(output.destination.path) can't be written "
              + "(\(String(cString: strerror(errno)))).",
            mayHaveReachedServer: true, context: transfer.context)
          return 0
        }
        written += result
      }
      return count
    }
    guard body.count + count <= maxResponseBytes else {
      localFailure = CourierError(
        .invalidResponse, mayHaveReachedServer: true,
        underlying: "response body over \(maxResponseBytes) bytes", context: transfer.context)
      return 0
    }
    body.append(buffer.assumingMemoryBound(to: UInt8.self), count: count)
    return count
  }

  func progressed(downTotal: Int64, downNow: Int64, upNow: Int64) -> Int32 {
    if transfer.isFinished { return 1 }  // answered already (cancelled, deadline): stop now
    if upNow != moved.up || downNow != moved.down {
      moved = (upNow, downNow)
      lastActivity = .now
    }
    guard transfer.progress != nil else { return 0 }
    let downloading: Bool
    switch transfer.sink {
    case .memory: downloading = false
    case .file, .sink: downloading = true
    }
    let (now, total) = downloading ? (downNow, downTotal) : (upNow, transfer.bodyLength)
    if now != reported {
      reported = now
      transfer.progress?(TransferProgress(sent: now, total: total))
    }
    return 0
  }

  // MARK: the end

  /// The caller's answer for libcurl's result code.
  /// - Parameter code: the `CURLcode` (0 for success).
  /// - Returns: the response and its body; the error classified by `CurlErrorTable`, or
  ///   `invalidResponse` for a head `HTTPResponse` cannot hold.
  func result(code: Int) -> Result<CurlAnswer, CourierError> {
    if code == 0 {
      var status = 0
      _ = courier_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
      defer {
        body = Data()
        fields = []
        trailers = nil
      }
      let answer: CurlAnswer
      do throws(CourierError) {
        let head = try HTTPResponse(
          receivedStatus: status, fields: fields, context: transfer.context)
        var trailerFields: HTTPFields?
        if let trailers {
          trailerFields = try HTTPResponse.receivedFields(trailers, context: transfer.context)
        }
        if let sink = sinkOutput {
          sinkOutput = nil
          Glibc.close(sink.fd)
          answer = (
            head,
            ResponseBody(
              file: sink.file, offset: sink.start, count: sink.written,
              trailerFields: trailerFields)
          )
        } else {
          answer = (head, ResponseBody(bytes: body, trailerFields: trailerFields))
        }
      } catch {
        // A bad reply's body is not the file's: it never takes the destination's place.
        discardOutput()
        return .failure(error)
      }
      if let output {
        self.output = nil
        Glibc.close(output.fd)
        guard rename(output.temporary.path, output.destination.path) == 0 else {
          unlink(output.temporary.path)
          return .failure(
            CourierError(
              .fileUnavailable,
              serverMessage: "The file \(output.destination.path) can't be written.",
              mayHaveReachedServer: true, context: transfer.context))
        }
      }
      return .success(answer)
    }
    // The partial file goes before the caller hears of the failure, so none is ever seen.
    discardOutput()
    if let failure = localFailure ?? reader?.failure { return .failure(failure) }
    if code == CurlErrorTable.Code.partialFile,
      let conflict = HTTPResponse.receivedLengthConflict(in: fields)
    {
      // Cut short of the length libcurl went by, one of several the head gave (decision 2434).
      return .failure(.lengthConflict(conflict, context: transfer.context))
    }
    var requestBytes = 0
    _ = courier_curl_getinfo_long(handle, CURLINFO_REQUEST_SIZE, &requestBytes)
    var outcome = CurlErrorTable.classify(
      curlCode: code, offline: transfer.pathStatus() == .unsatisfied,
      requestSent: requestBytes > 0)
    var detail = String(cString: errorBuffer)
    if detail.isEmpty { detail = String(cString: curl_easy_strerror(CURLcode(UInt32(code)))) }
    // A pin, trust or client-certificate failure says which setting to look at, and the
    // server's refusal of the client certificate is no lost connection (decision 2430).
    let tlsCode = CurlErrorTable.tlsCode(curlCode: code, detail: detail)
    if CurlErrorTable.isCertificateAlert(curlCode: code, detail: detail) {
      outcome = .init(.tls)
    }
    if code == CurlErrorTable.Code.operationTimedOut, idleExpired,
      let idle = transfer.idleTimeout
    {
      detail += " (nothing sent or received for \(idle))"
    } else if code == CurlErrorTable.Code.operationTimedOut, let timeout = transfer.timeout {
      detail += " (overall deadline of \(timeout))"
    }
    return .failure(
      CourierError(
        CourierError.Kind(transportFailure: outcome.kind),
        code: outcome.kind == .tls ? tlsCode : outcome.code,
        mayHaveReachedServer: outcome.mayHaveReachedServer,
        underlying: "CURLcode \(code): \(detail)", context: transfer.context))
  }

  /// Frees the handle and what it used; the loop has removed it from the multi handle first.
  func cleanup() {
    curl_easy_cleanup(handle)
    curl_slist_free_all(headerList)
    headerList = nil
    errorBuffer.deallocate()
    reader?.closeFile()
    reader = nil
    discardOutput()
  }

  private func discardOutput() {
    // The caller's file keeps what came: a download continues from there.
    if let sink = sinkOutput {
      Glibc.close(sink.fd)
      sinkOutput = nil
    }
    guard let output else { return }
    Glibc.close(output.fd)
    unlink(output.temporary.path)
    self.output = nil
  }
}
