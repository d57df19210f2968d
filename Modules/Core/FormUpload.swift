import CourierDomain
import CourierPorts
import HTTPTypes

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

/// One `multipart/form-data` upload sent and proven (decisions 0310, 0414): the parts laid out
/// once under one boundary, sent under the composed transport's retry policy with one
/// `Idempotency-Key` and the same bytes on every attempt, the answer classified and checked
/// for the stored record, with the attempts learnt from the retry step's events (decision 2201).
/// Used by `Uploader` and by the replay of queued uploads.
struct FormUpload: Sendable {
  let transport: any Transport
  let options: TransportOptions
  let temporaryDirectory: URL
  let allowSegments: Bool
  let progressGranularity: Int64

  /// What a proven upload answered.
  struct Answer {
    /// The server's response, 2xx.
    var response: HTTPResponse
    /// Its body.
    var body: ResponseBody
    /// The attempts made.
    var attempts: Int
    /// The length of the body that was sent.
    var bodyLength: Int64
  }

  /// Sends the parts and proves the answer.
  /// - Returns: the answer, the attempts it took and the body's length.
  /// - Throws: the classified failure, `notTheServer` for an answer that proves nothing.
  func send(
    _ parts: [MultipartPart], boundary: MultipartBoundary, to target: URL,
    idempotencyKey key: String, confirmation: DeliveryProof.UploadConfirmation,
    fileSize: Int64?, temporary: TemporaryFiles,
    onState: @escaping @Sendable (UploadState) -> Void
  ) async throws -> Answer {
    let layout = try MultipartForm(parts).layout(boundary: boundary)
    let http = try HTTPRequest(
      checking: target, method: .post,
      headerFields: [
        .accept: "application/json", .idempotencyKey: key, .contentType: layout.contentType,
      ])
    let attempts = AttemptCount()
    let (response, body) = try await send(
      http, layout: layout, temporary: temporary, attempts: attempts, onState: onState)
    if let failure = ResponseClassifier.classify(
      response, body: body.bytes, attempts: attempts.value, context: http.summary)
    {
      throw failure
    }
    try DeliveryProof.upload(
      response, body: body.bytes, attempts: attempts.value, confirmation: confirmation,
      fileSize: fileSize)
    return Answer(
      response: response, body: body, attempts: attempts.value, bodyLength: layout.contentLength)
  }

  /// Sends the laid-out body: streamed in segments (every transport takes them), or, when
  /// segments are not allowed, from a temporary file (or memory, when small) written once and
  /// sent again on each attempt. Progress and retry decisions travel in the call's options.
  private func send(
    _ request: HTTPRequest, layout: MultipartBodyLayout, temporary: TemporaryFiles,
    attempts: AttemptCount, onState: @escaping @Sendable (UploadState) -> Void
  ) async throws -> (HTTPResponse, ResponseBody) {
    let total = layout.contentLength
    let throttle = ProgressThrottle(granularity: progressGranularity)
    let progress: @Sendable (TransferProgress) -> Void = { value in
      if throttle.admit(sent: value.sent, total: total) {
        onState(.uploading(sent: value.sent, total: total))
      }
    }
    let callObserver = attempts.observer(before: options.onRetry)
    let observer: @Sendable (RetryEvent) -> Void = { event in
      callObserver(event)
      guard case .retrying(let attempt, let maxAttempts, let delay, let error) = event else {
        return
      }
      throttle.reset()
      onState(.retrying(attempt: attempt, maxAttempts: maxAttempts, delay: delay, reason: error))
    }
    onState(.uploading(sent: 0, total: total))
    // The body lasts what the link needs: the attempt is bounded by lack of progress, not by
    // total time (decision 1303), so a large file over a slow link needs no `--timeout`.
    var callOptions = options.boundedByProgress()
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
        // and group databases for the owner's names on the way.
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
