import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The upload use case: compress (or not, and say why), encode `multipart/form-data` (a
/// `title` field, extra fields, the `file` part), send it under the composed transport's retry
/// policy with one `Idempotency-Key` and the same bytes on every attempt, and classify the
/// answer. The body is streamed in segments straight from its sources (or, when asked, written
/// once to a temporary file). Every temporary file is removed on success, failure and cancellation.
public struct Uploader: Sendable {
  /// The composed transport (retry, auth, logging around an adapter).
  package let transport: any Transport
  /// The image compressor.
  package let compressor: any ImageCompressor
  /// Per-attempt options.
  package let options: TransportOptions
  /// Where the compressed image and any body file are written.
  package let temporaryDirectory: URL
  /// Whether the body is streamed in segments (true by default) rather than written once to a
  /// temporary file.
  package let allowSegments: Bool
  /// The least change in bytes sent that is published as a new `uploading` state.
  package let progressGranularity: Int64

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
    UploadState.stream { try await self.perform(request, onState: $0) }
  }

  /// Runs an upload in the caller's task, reporting each state but the final one.
  /// - Parameters:
  ///   - request: what to upload.
  ///   - onState: receives `compressing`, `prepared`, `uploading` and `retrying` states.
  /// - Returns: the result.
  /// - Throws: `CourierError`: `fileUnavailable` naming a missing or unreadable file (before any
  ///   request is sent), `invalidInput` when the original must not be sent, the classified
  ///   failure of the upload with its attempts, `cancelled` on cancellation.
  package func perform(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void
  ) async throws -> UploadResult {
    try await preparation.run(request, onState: onState) { prepared, temporary in
      let title = request.title ?? request.file.lastPathComponent
      let key = request.idempotencyKey ?? UUID().uuidString.lowercased()
      let answer = try await form.send(
        [.text("title", title)] + request.fields + [prepared.part], boundary: .random(),
        to: request.target, idempotencyKey: key, confirmation: request.confirmation,
        fileSize: prepared.length, temporary: temporary, onState: onState)
      return UploadResult(
        response: answer.response, responseBody: answer.body, attempts: answer.attempts,
        verdict: prepared.verdict, bodyLength: answer.bodyLength, idempotencyKey: key)
    }
  }

  /// The shared "prepare the bytes to send" step, with this uploader's compressor.
  var preparation: UploadPreparation {
    UploadPreparation(compressor: compressor, temporaryDirectory: temporaryDirectory)
  }

  /// The multipart send, with this uploader's transport and options.
  var form: FormUpload {
    FormUpload(
      transport: transport, options: options, temporaryDirectory: temporaryDirectory,
      allowSegments: allowSegments, progressGranularity: progressGranularity)
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
