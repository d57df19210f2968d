#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Decides whether a photo is sent compressed, as it is, or not at all, and says why. Pure:
/// the caller compresses (or not) and inspects the original, then asks.
package enum CompressionDecision {
  /// What happened when compressing.
  package enum Outcome: Sendable, Equatable {
    /// Compression produced a file of this many bytes.
    case compressed(size: Int64)
    /// Compression failed with this error.
    case failed(CourierError)
    /// Compression was not run (not an image, `--no-compress`).
    case notAttempted
  }

  /// Everything the decision looks at.
  package struct Input: Sendable, Equatable {
    /// The file's name, for the message (not its full path).
    package var fileName: String
    /// The original's size in bytes.
    package var originalSize: Int64
    /// Whether the original is an image at all.
    package var isImage: Bool
    /// Whether the original could be sent as it is: see `isAcceptableAsIs(_:options:)`.
    package var originalAcceptable: Bool
    /// Whether the original carries (or, when its header can't be read, may carry) GPS data.
    package var originalHasLocation: Bool
    /// Whether the user asked not to compress (`--no-compress`).
    package var noCompress: Bool
    /// Whether `originalHasLocation` comes from reading the original's metadata. Without
    /// compression the image library is not loaded to find out (issue 14), and the original's
    /// location, if any, goes along.
    package var originalLocationChecked: Bool
    /// The options compression used: with `stripMetadata` the original's location must not
    /// leave the device.
    package var options: CompressionOptions
    /// What compression did.
    package var outcome: Outcome

    /// Creates the decision's input.
    /// - Parameters:
    ///   - fileName: the file's name.
    ///   - originalSize: the original's size in bytes.
    ///   - isImage: whether the original is an image.
    ///   - originalAcceptable: whether the original can be sent as it is.
    ///   - originalHasLocation: whether the original does or may carry GPS data.
    ///   - noCompress: whether the user turned compression off.
    ///   - options: the compression options.
    ///   - outcome: what compression did.
    ///   - originalLocationChecked: whether the original's metadata was read for a location.
    package init(
      fileName: String, originalSize: Int64, isImage: Bool, originalAcceptable: Bool,
      originalHasLocation: Bool, noCompress: Bool, options: CompressionOptions = .init(),
      outcome: Outcome, originalLocationChecked: Bool = true
    ) {
      self.fileName = fileName
      self.originalSize = originalSize
      self.isImage = isImage
      self.originalAcceptable = originalAcceptable
      self.originalHasLocation = originalHasLocation
      self.noCompress = noCompress
      self.originalLocationChecked = originalLocationChecked
      self.options = options
      self.outcome = outcome
    }
  }

  /// Which file goes out.
  package enum Send: String, Sendable, Equatable, Codable {
    /// The compressed file.
    case compressed
    /// The original, unchanged.
    case original
    /// Nothing: sending the original would leak what the user asked to keep.
    case nothing
  }

  /// Why, as a stable code for scripts (`--json`).
  package enum Reason: String, Sendable, Equatable, Codable, CaseIterable {
    /// Compressed and worth it.
    case compressed
    /// The user turned compression off.
    case compressionDisabled = "compression_disabled"
    /// The file is not an image: sent as is.
    case notAnImage = "not_an_image"
    /// The original was already fine and compressing did not make it smaller.
    case compressedNotSmaller = "compressed_not_smaller"
    /// Compression failed (or was not run); the original is sent.
    case compressionFailed = "compression_failed"
    /// Compression failed and the original holds GPS data that must not leave the device.
    case originalHasLocation = "original_has_location"
  }

  /// The decision.
  package struct Verdict: Sendable, Equatable {
    /// Which file goes out.
    package var send: Send
    /// Why.
    package var reason: Reason
    /// A sentence for a person, naming the file.
    package var message: String

    /// Creates a verdict.
    /// - Parameters:
    ///   - send: which file goes out.
    ///   - reason: why.
    ///   - message: the sentence for a person.
    package init(send: Send, reason: Reason, message: String) {
      self.send = send
      self.reason = reason
      self.message = message
    }
  }

  /// Whether an original can be sent as it is when compressing does not make it smaller: a
  /// JPEG, PNG or WebP (formats every browser and image library reads) no larger than the
  /// maximum long edge, carrying no location when metadata is to be stripped. A HEIF never is
  /// (most browsers cannot show it: the point of compressing it is to send a JPEG), nor is an
  /// image over the long edge (the point is to make it smaller), nor one with GPS data that
  /// must not leave the device, whatever the sizes.
  /// - Parameters:
  ///   - info: the original's header.
  ///   - options: the compression options.
  /// - Returns: true when sending the original is as good as sending a compressed copy.
  package static func isAcceptableAsIs(_ info: ImageInfo, options: CompressionOptions) -> Bool {
    switch info.format.storage {
    case .jpeg, .png, .webp: break
    case .heif, .other: return false
    }
    guard info.longEdge <= options.maxLongEdge else { return false }
    return !(options.stripMetadata && info.hasLocation)
  }

  /// Decides what to send. A compressed file larger than the original goes only when the
  /// original cannot (see `isAcceptableAsIs(_:options:)`), and the message then says why.
  /// - Parameter input: the facts.
  /// - Returns: which file to send, why, and what to tell the user.
  package static func decide(_ input: Input) -> Verdict {
    let name = input.fileName
    if !input.isImage {
      return Verdict(
        send: .original, reason: .notAnImage, message: "\(name) is not an image: sent as is.")
    }
    if input.noCompress {
      let location =
        !input.originalLocationChecked
        ? ", any location data included"
        : input.originalHasLocation ? ", location data included" : ""
      return Verdict(
        send: .original, reason: .compressionDisabled,
        message: "\(name) is sent as is (compression turned off\(location)).")
    }
    let why: String
    switch input.outcome {
    case .compressed(let size):
      if input.originalAcceptable && size >= input.originalSize {
        return Verdict(
          send: .original, reason: .compressedNotSmaller,
          message:
            "\(name) is already small enough (\(formatBytes(input.originalSize))); compressing "
            + "would make it \(formatBytes(size)), so the original is sent.")
      }
      let sizes =
        "\(name) compressed from \(formatBytes(input.originalSize)) to \(formatBytes(size))"
      guard size > input.originalSize else {
        return Verdict(send: .compressed, reason: .compressed, message: sizes + ".")
      }
      // Larger than the original, which cannot go as it is: say why the bigger file goes.
      let why =
        input.options.stripMetadata && input.originalHasLocation
        ? "the original holds location data that must not leave the device"
        : "the original can't be sent as it is (a format few apps read, or over the "
          + "\(input.options.maxLongEdge)-pixel long edge)"
      return Verdict(
        send: .compressed, reason: .compressed, message: sizes + ": larger, but " + why + ".")
    case .failed(let error):
      why = error.serverMessage ?? error.userMessage
    case .notAttempted:
      why = "compression was not run"
    }
    if input.options.stripMetadata && input.originalHasLocation {
      return Verdict(
        send: .nothing, reason: .originalHasLocation,
        message:
          "\(name) couldn't be compressed (\(why)) and contains location data, so it was not "
          + "sent. Turn compression off to send it as is.")
    }
    return Verdict(
      send: .original, reason: .compressionFailed,
      message: "\(name) couldn't be compressed (\(why)): the original is sent.")
  }

  /// A byte count for a person, in decimal units ("850 KB", "2.4 MB"), locale-independent.
  /// - Parameter bytes: the count.
  /// - Returns: the text.
  package static func formatBytes(_ bytes: Int64) -> String {
    if bytes < 1000 { return "\(bytes) bytes" }
    if bytes < 1_000_000 { return "\((bytes + 500) / 1000) KB" }
    let tenths = (bytes + 50_000) / 100_000
    return "\(tenths / 10).\(tenths % 10) MB"
  }
}
