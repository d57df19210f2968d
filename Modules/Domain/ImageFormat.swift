#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An image file format, as recognised from the file's content (not its name).
///
/// A struct over a private storage, so that a format added later (AVIF, JPEG XL) breaks no
/// one's `switch`: compare with `==`.
public struct ImageFormat: Sendable, Hashable, CustomStringConvertible {
  /// The formats, for Courier's own exhaustive switches.
  package enum Storage: Sendable, Hashable {
    /// JPEG.
    case jpeg
    /// PNG.
    case png
    /// WebP.
    case webp
    /// HEIF, HEIC, AVIF.
    case heif
    /// Another format, by its loader's name.
    case other(String)
  }

  /// Which format this is.
  package let storage: Storage

  /// A format.
  /// - Parameter storage: which.
  package init(_ storage: Storage) { self.storage = storage }

  /// JPEG (`image/jpeg`): lossy, what cameras write and what the compressor writes.
  public static let jpeg = ImageFormat(.jpeg)
  /// PNG (`image/png`): lossless, for screenshots and drawings.
  public static let png = ImageFormat(.png)
  /// WebP, lossy or lossless.
  public static let webp = ImageFormat(.webp)
  /// HEIF, HEIC or AVIF: what recent phones write.
  public static let heif = ImageFormat(.heif)

  /// A format the decoder knows and Courier does not send, named by its decoder.
  /// - Parameter name: the decoder's name for it.
  /// - Returns: the format.
  public static func other(_ name: String) -> ImageFormat { ImageFormat(.other(name)) }

  /// The format's usual name: `JPEG`, `PNG`, `WebP`, `HEIF`, or the decoder's name.
  public var description: String {
    switch storage {
    case .jpeg: return "JPEG"
    case .png: return "PNG"
    case .webp: return "WebP"
    case .heif: return "HEIF"
    case .other(let name): return name
    }
  }
}
