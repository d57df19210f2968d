#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An image file format, as recognised from the file's content (not its name).
public enum ImageFormat: Sendable, Equatable, Hashable, CustomStringConvertible {
  /// JPEG (`image/jpeg`): lossy, what cameras write and what the compressor writes.
  case jpeg
  /// PNG (`image/png`): lossless, for screenshots and drawings.
  case png
  /// WebP.
  case webp
  /// HEIF / HEIC / AVIF.
  case heif
  /// Another format the decoder knows (named by its loader), which Courier does not send.
  case other(String)

  /// The format's usual name.
  public var description: String {
    switch self {
    case .jpeg: return "JPEG"
    case .png: return "PNG"
    case .webp: return "WebP"
    case .heif: return "HEIF"
    case .other(let name): return name
    }
  }
}
