#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a compression produced.
public struct CompressionResult: Sendable, Equatable {
  /// The output file's size in bytes.
  package var outputSize: Int64
  /// The output's width in pixels, upright.
  package var width: Int
  /// The output's height in pixels, upright.
  package var height: Int
  /// The input file's size in bytes.
  package var inputSize: Int64
  /// Whether an EXIF orientation other than "upright" was applied to the pixels.
  package var orientationApplied: Bool
  /// The input's header, as read before compressing.
  package var input: ImageInfo

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
