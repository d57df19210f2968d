#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension CourierError {
  /// The `code` of an error for a file that is not an image: such a file is sent as is.
  package static let notAnImageCode = "not_an_image"
  /// The `code` of an error for an image format this device cannot decode (e.g. HEIC
  /// without a HEIF decoder). It matches the backend's `unsupported_format`.
  package static let unsupportedFormatCode = "unsupported_format"
  /// The `code` of an error for an image whose data is truncated or corrupt.
  package static let corruptImageCode = "corrupt_image"
}
