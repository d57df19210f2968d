import CourierDomain
import CourierPorts
import Foundation
import Synchronization

/// The upload use case: compress (or not, and say why), encode `multipart/form-data` (a
/// `title` field, extra fields, the `file` part), send it under the composed transport's retry
/// policy with one `Idempotency-Key` and the same bytes on every attempt, and classify the
/// answer. The body is streamed in segments straight from its sources (or, when asked, written
/// once to a temporary file). Every temporary file is removed on success, failure and cancellation.
public struct Uploader: Sendable {
  /// The composed transport (retry, auth, logging around an adapter).
  public let transport: any Transport
  /// The image compressor.
  public let compressor: any ImageCompressor
  /// Per-attempt options.
  public let options: TransportOptions
  /// Where the compressed image and any body file are written.
  public let temporaryDirectory: URL
  /// Whether the body is streamed in segments (true by default) rather than written once to a
  /// temporary file.
  public let allowSegments: Bool
  /// The least change in bytes sent that is published as a new `uploading` state.
  public let progressGranularity: Int64

  /// Creates an uploader.
  /// - Parameters:
  ///   - transport: the composed transport.
  ///   - compressor: the image compressor.
  ///   - options: per-attempt options.
  ///   - temporaryDirectory: where temporary files go.
  ///   - allowSegments: whether to stream in segments rather than through a temporary file.
  ///   - progressGranularity: the least progress change published (0: every report).
  public init(
    transport: any Transport, compressor: any ImageCompressor,
    options: TransportOptions = TransportOptions(),
    temporaryDirectory: URL = FileManager.default.temporaryDirectory, allowSegments: Bool = true,
    progressGranularity: Int64 = 64 * 1024
  ) {
    self.transport = transport
    self.compressor = compressor
    self.options = options
    self.temporaryDirectory = temporaryDirectory
    self.allowSegments = allowSegments
    self.progressGranularity = max(0, progressGranularity)
  }

  /// Starts an upload and publishes its states. The last element is `succeeded`, or the
  /// stream throws the `CourierError` that ended the upload (so a failure cannot be taken for
  /// the end of progress); ending the iteration early (or cancelling the consuming task)
  /// cancels the upload.
  /// - Parameter request: what to upload.
  /// - Returns: the states, in order; none is dropped.
  public func states(for request: UploadRequest) -> AsyncThrowingStream<UploadState, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: UploadState.self)
    let task = Task {
      do {
        let result = try await perform(request) { state in
          if !state.isFinal { continuation.yield(state) }
        }
        continuation.yield(.succeeded(result))
        continuation.finish()
      } catch {
        continuation.finish(throwing: CourierError.wrapping(error))
      }
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  /// Runs an upload in the caller's task, reporting each state but the final one.
  /// - Parameters:
  ///   - request: what to upload.
  ///   - onState: receives `compressing`, `prepared`, `uploading` and `retrying` states.
  /// - Returns: the result.
  /// - Throws: `CourierError`: `fileUnavailable` naming a missing or unreadable file (before any
  ///   request is sent), `invalidInput` when the original must not be sent, the classified
  ///   failure of the upload with its attempts, `cancelled` on cancellation.
  public func perform(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void
  ) async throws -> UploadResult {
    // What an upload killed before its cleanup left (its process is gone) goes first, once.
    CourierTemporaryFile.sweepOnce(temporaryDirectory)
    let temporary = TemporaryFiles()
    defer { temporary.removeAll() }
    do {
      let original = try MultipartPart.file("file", at: request.file)
      let (filePart, verdict) = try await choose(
        request, original: original, temporary: temporary, onState: onState)
      onState(.prepared(verdict))
      if verdict.send == .nothing {
        throw CourierError(
          .invalidInput, code: CompressionDecision.Reason.originalHasLocation.rawValue,
          serverMessage: verdict.message, field: "file", context: request.file.path)
      }
      let title = request.title ?? request.file.lastPathComponent
      let form = MultipartForm([.text("title", title)] + request.fields + [filePart])
      let layout = try form.layout()
      let key = request.idempotencyKey ?? UUID().uuidString.lowercased()
      var http = HTTPRequest(method: .post, url: request.target)
      http.headers["Accept"] = "application/json"
      http.headers["Idempotency-Key"] = key
      http.headers["Content-Type"] = layout.contentType
      let response = try await send(http, layout: layout, temporary: temporary, onState: onState)
      // Classified once: the retry step's verdict, or here when no retry step ran.
      if let failure = response.failure
        ?? ResponseClassifier.classify(response, context: http.summary)
      {
        throw failure
      }
      var fileSize: Int64?
      if case .file(_, let size) = filePart.content { fileSize = size }
      try DeliveryProof.upload(response, confirmation: request.confirmation, fileSize: fileSize)
      return UploadResult(
        response: response, verdict: verdict, bodyLength: layout.contentLength,
        idempotencyKey: key)
    } catch {
      var failure = CourierError.wrapping(
        error, context: "upload \(request.file.lastPathComponent)")
      if Task.isCancelled { failure.kind = .cancelled }
      throw failure
    }
  }

  /// Compresses when asked and worth it, and decides which file part goes out.
  func choose(
    _ request: UploadRequest, original: MultipartPart, temporary: TemporaryFiles,
    onState: @Sendable (UploadState) -> Void
  ) async throws -> (MultipartPart, CompressionDecision.Verdict) {
    let name = request.file.lastPathComponent
    guard case .file(_, let originalSize) = original.content else { return (original, noVerdict) }
    let sniffedImage = original.contentType?.hasPrefix("image/") ?? false
    var info: ImageInfo?
    var isImage = sniffedImage
    if sniffedImage {
      do {
        info = try await compressor.inspect(request.file)
      } catch let error as CourierError where error.code == CourierError.notAnImageCode {
        isImage = false
      } catch let error as CourierError where error.kind == .cancelled {
        throw error
      } catch {
        info = nil
      }
    }
    var outcome = CompressionDecision.Outcome.notAttempted
    var compressedURL: URL?
    if isImage && request.compress {
      onState(.compressing)
      let output = temporary.make(extension: "jpg", in: temporaryDirectory)
      do {
        let result = try await compressor.compress(
          input: request.file, output: output, options: request.compression)
        outcome = .compressed(size: result.outputSize)
        compressedURL = output
      } catch {
        let failure = CourierError.wrapping(error, context: request.file.path)
        if failure.kind == .cancelled || Task.isCancelled { throw failure }
        outcome = .failed(failure)
      }
    }
    let verdict = CompressionDecision.decide(
      .init(
        fileName: name, originalSize: originalSize, isImage: isImage,
        originalAcceptable: info.map {
          CompressionDecision.isAcceptableAsIs($0, options: request.compression)
        } ?? false,
        originalHasLocation: info?.hasLocation ?? isImage, noCompress: !request.compress,
        options: request.compression, outcome: outcome))
    guard verdict.send == .compressed, let compressedURL, case .compressed(let size) = outcome
    else { return (original, verdict) }
    let base = (name as NSString).deletingPathExtension
    let part = MultipartPart.file(
      "file", filename: (base.isEmpty ? "photo" : base) + ".jpg", contentType: "image/jpeg",
      url: compressedURL, size: size)
    return (part, verdict)
  }

  private var noVerdict: CompressionDecision.Verdict {
    CompressionDecision.Verdict(send: .original, reason: .notAnImage, message: "")
  }

  /// Sends the laid-out body: streamed in segments (every transport takes them), or, when
  /// segments are not allowed, from a temporary file (or memory, when small) written once and
  /// sent again on each attempt. Progress and retry decisions travel in the call's options.
  private func send(
    _ request: HTTPRequest, layout: MultipartBodyLayout, temporary: TemporaryFiles,
    onState: @escaping @Sendable (UploadState) -> Void
  ) async throws -> HTTPResponse {
    let total = layout.contentLength
    let throttle = ProgressThrottle(granularity: progressGranularity)
    let progress: @Sendable (TransferProgress) -> Void = { value in
      if throttle.admit(sent: value.sent, total: total) {
        onState(.uploading(sent: value.sent, total: total))
      }
    }
    let observer: @Sendable (RetryEvent) -> Void = { event in
      guard case .retrying(let attempt, let maxAttempts, let delay, let error) = event else {
        return
      }
      throttle.reset()
      onState(.retrying(attempt: attempt, maxAttempts: maxAttempts, delay: delay, reason: error))
    }
    onState(.uploading(sent: 0, total: total))
    var callOptions = options
    callOptions.progress = progress
    callOptions.onRetry = observer
    if allowSegments {
      let segments = try Self.bodySegments(layout)
      return try await transport.send(request, body: .segments(segments), options: callOptions)
    }
    let writer = MultipartBodyWriter(directory: temporaryDirectory)
    let body = try await writer.makeBody(layout)
    if let url = body.fileURL { temporary.adopt(url) }
    return try await body.send(request, through: transport, options: callOptions)
  }

  /// The layout's segments as the transport port describes them, after checking that every
  /// file still has the size it had when the layout was made.
  static func bodySegments(_ layout: MultipartBodyLayout) throws -> [BodySegment] {
    try layout.segments.map { segment in
      switch segment {
      case .bytes(let data):
        return .bytes(data)
      case .file(let url, let offset, let length, let fileSize):
        // stat(2), which follows a symbolic link as the layout's size (read through an open
        // file) did; FileManager's attributes describe the link itself, and asked the user
        // and group databases for the owner's names on the way (issue 14).
        var info = stat()
        let size = stat(url.path, &info) == 0 ? Int64(info.st_size) : nil
        guard size == fileSize else {
          throw CourierError(
            .fileUnavailable, code: "file_changed",
            serverMessage: "The file \(url.lastPathComponent) changed while it was being "
              + "prepared for upload. Please try again.",
            context: url.path)
        }
        return .file(url, offset: offset, length: length)
      }
    }
  }
}

/// The temporary files one upload made, removed together at its end.
final class TemporaryFiles: Sendable {
  private let urls = Mutex<[URL]>([])

  func make(extension ext: String, in directory: URL) -> URL {
    let url = CourierTemporaryFile.make("courier-upload-", ext: ext, in: directory)
    adopt(url)
    return url
  }

  func adopt(_ url: URL) { urls.withLock { $0.append(url) } }

  func removeAll() {
    for url in urls.withLock({ $0 }) { try? FileManager.default.removeItem(at: url) }
  }
}
