import Foundation

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

/// What an image's header says, read without decoding its pixels.
public struct ImageInfo: Sendable, Equatable {
  /// The container the bytes are in, from their signature (not the file name).
  public var format: ImageFormat
  /// The width as stored, before the EXIF orientation is applied.
  public var width: Int
  /// The height as stored, before the EXIF orientation is applied.
  public var height: Int
  /// The EXIF orientation, 1 (upright) to 8.
  public var orientation: Int
  /// Whether the image has an alpha channel.
  public var hasAlpha: Bool
  /// Whether the file carries GPS coordinates (EXIF or XMP).
  public var hasLocation: Bool
  /// Whether the file carries EXIF, XMP or IPTC metadata.
  public var hasMetadata: Bool
  /// The file's size in bytes.
  public var byteCount: Int64

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
  public var longEdge: Int { max(width, height) }
}

/// What a compression produced.
public struct CompressionResult: Sendable, Equatable {
  /// The output file's size in bytes.
  public var outputSize: Int64
  /// The output's width in pixels, upright.
  public var width: Int
  /// The output's height in pixels, upright.
  public var height: Int
  /// The input file's size in bytes.
  public var inputSize: Int64
  /// Whether an EXIF orientation other than "upright" was applied to the pixels.
  public var orientationApplied: Bool
  /// The input's header, as read before compressing.
  public var input: ImageInfo

  /// Creates a result.
  /// - Parameters:
  ///   - outputSize: the output's size in bytes.
  ///   - width: the output's width.
  ///   - height: the output's height.
  ///   - inputSize: the input's size in bytes.
  ///   - orientationApplied: whether the orientation was applied.
  ///   - input: the input's header.
  public init(
    outputSize: Int64, width: Int, height: Int, inputSize: Int64, orientationApplied: Bool,
    input: ImageInfo
  ) {
    self.outputSize = outputSize
    self.width = width
    self.height = height
    self.inputSize = inputSize
    self.orientationApplied = orientationApplied
    self.input = input
  }
}

extension CourierError {
  /// The `code` of an error for a file that is not an image: such a file is sent as is.
  public static let notAnImageCode = "not_an_image"
  /// The `code` of an error for an image format this device cannot decode (e.g. HEIC
  /// without a HEIF decoder). It matches the backend's `unsupported_format`.
  public static let unsupportedFormatCode = "unsupported_format"
  /// The `code` of an error for an image whose data is truncated or corrupt.
  public static let corruptImageCode = "corrupt_image"
}
