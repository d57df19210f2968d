#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How a photo is compressed before it is sent.
public struct CompressionOptions: Sendable, Equatable, Hashable {
  /// The longest edge of the output, in pixels. Smaller images are never upscaled.
  public var maxLongEdge: Int
  /// The JPEG quality, 1 (smallest) to 100 (best).
  public var quality: Int
  /// Whether EXIF, XMP, IPTC and the colour profile are removed (the pixels are converted to
  /// sRGB first). With it, GPS coordinates never leave the device.
  public var stripMetadata: Bool

  /// Creates options.
  /// - Parameters:
  ///   - maxLongEdge: the longest edge in pixels (default 2048); at least 1.
  ///   - quality: the JPEG quality (default 70, i.e. 0.7), clamped to 1...100.
  ///   - stripMetadata: whether metadata is removed (default true).
  public init(maxLongEdge: Int = 2048, quality: Int = 70, stripMetadata: Bool = true) {
    self.maxLongEdge = max(1, maxLongEdge)
    self.quality = min(100, max(1, quality))
    self.stripMetadata = stripMetadata
  }
}
