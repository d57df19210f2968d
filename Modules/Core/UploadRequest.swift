import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What to upload and how.
public struct UploadRequest: Sendable, Equatable {
  /// The file to send.
  package var file: URL
  /// The `title` field (the file's name when nil).
  package var title: String?
  /// Extra text fields, in order, after the title.
  package var fields: [MultipartPart]
  /// Where the multipart body is posted.
  package var target: URL
  /// Whether an image is compressed first (`--no-compress` turns it off).
  package var compress: Bool
  /// How an image is compressed.
  package var compression: CompressionOptions
  /// The `Idempotency-Key` sent on every attempt; one is generated when nil.
  package var idempotencyKey: String?
  /// What the reply must show for the upload to count as done (decision 0414): the stored
  /// record by default, so that a Wi-Fi login page's `200` is not taken for the server's.
  package var confirmation: DeliveryProof.UploadConfirmation
  /// Whether a tus creation goes without the bytes even where the server offers
  /// creation-with-upload (`QueuedUpload.bytesAfterCreation`, decision 2515).
  package var bytesAfterCreation = false

  /// Creates a request: `file` posted to `target` as `multipart/form-data`, an image
  /// compressed first, the reply required to show the stored record.
  /// - Parameters:
  ///   - file: the file.
  ///   - target: the URL to post to.
  ///   - title: the title (the file's name when nil).
  ///   - fields: extra text fields, in order.
  ///   - compress: whether images are compressed.
  ///   - compression: the compression options.
  ///   - idempotencyKey: the key for every attempt; generated when nil.
  public init(
    file: URL, target: URL, title: String? = nil, fields: [MultipartPart] = [],
    compress: Bool = true, compression: CompressionOptions = CompressionOptions(),
    idempotencyKey: String? = nil
  ) {
    self.init(
      file: file, target: target, title: title, fields: fields, compress: compress,
      compression: compression, idempotencyKey: idempotencyKey, confirmation: .record)
  }

  /// Creates a request whose reply must show what `confirmation` says.
  /// - Parameters:
  ///   - file: the file.
  ///   - target: the URL to post to.
  ///   - title: the title (the file's name when nil).
  ///   - fields: extra text fields.
  ///   - compress: whether images are compressed.
  ///   - compression: the compression options.
  ///   - idempotencyKey: the key for every attempt; generated when nil.
  ///   - confirmation: what the reply must show.
  package init(
    file: URL, target: URL, title: String? = nil, fields: [MultipartPart] = [],
    compress: Bool = true, compression: CompressionOptions = CompressionOptions(),
    idempotencyKey: String? = nil, confirmation: DeliveryProof.UploadConfirmation
  ) {
    self.confirmation = confirmation
    self.file = file
    self.target = target
    self.title = title
    self.fields = fields
    self.compress = compress
    self.compression = compression
    self.idempotencyKey = idempotencyKey
  }
}
