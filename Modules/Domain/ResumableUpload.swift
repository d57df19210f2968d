import Foundation

/// What survives a killed process about one resumable (tus) upload: where it goes, its
/// `Idempotency-Key`, the identity of the bytes it sends and the offset the server confirmed.
/// Saved before the creation is sent and after each confirmed chunk; removed on completion.
public struct ResumableUpload: Sendable, Equatable, Codable {
  /// The tus endpoint the upload was created at.
  public var endpoint: String
  /// The original file's absolute path.
  public var file: String
  /// The original file's size, in bytes.
  public var fileSize: Int64
  /// The original file's modification time, in nanoseconds since 1970.
  public var fileModified: Int64
  /// SHA-256 (hex) of the bytes sent (the compressed image, or the file itself).
  public var sha256: String
  /// The number of bytes sent: the upload's `Upload-Length`.
  public var length: Int64
  /// The `Idempotency-Key` of the creation, the same for the upload's whole life.
  public var idempotencyKey: String
  /// The upload URL, once the server gave it.
  public var uploadURL: String?
  /// The offset the server last confirmed.
  public var confirmedOffset: Int64

  /// Creates a record.
  /// - Parameters:
  ///   - endpoint: the tus endpoint.
  ///   - file: the original file's path.
  ///   - fileSize: its size.
  ///   - fileModified: its modification time (ns).
  ///   - sha256: the sent bytes' SHA-256, hex.
  ///   - length: the upload's length.
  ///   - idempotencyKey: the creation's key.
  ///   - uploadURL: the upload URL, if known.
  ///   - confirmedOffset: the confirmed offset.
  public init(
    endpoint: String, file: String, fileSize: Int64, fileModified: Int64, sha256: String,
    length: Int64, idempotencyKey: String, uploadURL: String? = nil, confirmedOffset: Int64 = 0
  ) {
    self.endpoint = endpoint
    self.file = file
    self.fileSize = fileSize
    self.fileModified = fileModified
    self.sha256 = sha256
    self.length = length
    self.idempotencyKey = idempotencyKey
    self.uploadURL = uploadURL
    self.confirmedOffset = confirmedOffset
  }

  /// The name a record is kept under: the same endpoint and file give the same name.
  /// - Parameters:
  ///   - endpoint: the tus endpoint.
  ///   - file: the original file's absolute path.
  /// - Returns: 64 hex digits.
  public static func storageKey(endpoint: String, file: String) -> String {
    SHA256.hex(SHA256.hash(Data("\(endpoint)\n\(file)".utf8)))
  }

  /// Whether this record describes the same bytes to the same endpoint, so the upload can go
  /// on where the server stopped; any change to the file (size, time, content) starts over.
  /// - Parameter other: the record made for the upload about to start.
  /// - Returns: true when it resumes.
  public func resumes(_ other: ResumableUpload) -> Bool {
    endpoint == other.endpoint && file == other.file && fileSize == other.fileSize
      && fileModified == other.fileModified && sha256 == other.sha256 && length == other.length
  }
}
