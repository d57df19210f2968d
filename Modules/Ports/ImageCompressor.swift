import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Shrinks a photo before it is sent: downsampled to a maximum long edge, turned upright,
/// stripped of its metadata (GPS included) and re-encoded as JPEG. One job, so a fake or
/// another codec can stand in for it.
public protocol ImageCompressor: Sendable {
  /// Compresses an image file into a JPEG file.
  /// - Parameters:
  ///   - input: the image to read (JPEG, PNG, WebP or HEIC); it is never modified.
  ///   - output: where to write the JPEG; replaced if it exists, untouched on failure.
  ///   - options: the long edge, quality and metadata policy.
  /// - Returns: sizes and dimensions of what was written.
  /// - Throws: `CourierError` naming the file: `.fileUnavailable` when it cannot be read;
  ///   `.invalidInput` with code `not_an_image`, `unsupported_format` or `corrupt_image`;
  ///   `.cancelled` when the task was cancelled.
  func compress(input: URL, output: URL, options: CompressionOptions) async throws
    -> CompressionResult

  /// Reads an image's header without decoding its pixels.
  /// - Parameter input: the file.
  /// - Returns: its format, size, orientation and metadata.
  /// - Throws: `CourierError` as `compress` does.
  func inspect(_ input: URL) async throws -> ImageInfo
}
