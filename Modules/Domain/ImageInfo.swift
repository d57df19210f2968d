#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What an image's header says, read without decoding its pixels.
public struct ImageInfo: Sendable, Equatable {
  /// The container the bytes are in, from their signature (not the file name).
  package var format: ImageFormat
  /// The width as stored, before the EXIF orientation is applied.
  package var width: Int
  /// The height as stored, before the EXIF orientation is applied.
  package var height: Int
  /// The EXIF orientation, 1 (upright) to 8.
  package var orientation: Int
  /// Whether the image has an alpha channel.
  package var hasAlpha: Bool
  /// Whether the file carries GPS coordinates (EXIF or XMP).
  package var hasLocation: Bool
  /// Whether the file carries EXIF, XMP or IPTC metadata.
  package var hasMetadata: Bool
  /// The file's size in bytes.
  package var byteCount: Int64

  /// Creates an image description.
  /// - Parameters:
  ///   - format: the format.
  ///   - width: the stored width.
  ///   - height: the stored height.
  ///   - orientation: the EXIF orientation (1 when none).
  ///   - hasAlpha: whether there is an alpha channel.
  ///   - hasLocation: whether GPS data is present.
  ///   - hasMetadata: whether any metadata is present.
  ///   - byteCount: the file's size.
  public init(
    format: ImageFormat, width: Int, height: Int, orientation: Int = 1, hasAlpha: Bool = false,
    hasLocation: Bool = false, hasMetadata: Bool = false, byteCount: Int64
  ) {
    self.format = format
    self.width = width
    self.height = height
    self.orientation = orientation
    self.hasAlpha = hasAlpha
    self.hasLocation = hasLocation
    self.hasMetadata = hasMetadata
    self.byteCount = byteCount
  }

  /// The longer of width and height.
  package var longEdge: Int { max(width, height) }
}
