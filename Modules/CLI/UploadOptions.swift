import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The options of `courier upload`.
package struct UploadOptions: Sendable, Equatable {
  /// The file to send.
  package var file: String
  /// `--title`.
  package var title: String?
  /// `--field NAME=VALUE`, in order.
  package var fields: [Field] = []
  /// `--to URL` (default: BASE_URL/photos).
  package var target: String?
  /// `--max-pixels N`: the longest edge after downsampling.
  package var maxPixels: Int?
  /// `--quality Q`: JPEG quality, 1...100 or 0.01...1.0.
  package var quality: Int?
  /// `--no-compress`.
  package var noCompress = false
  /// `--resumable`: whatever the server offers (the IETF draft at BASE_URL/photos, else tus
  /// 1.0.0 to BASE_URL/uploads, or `--to`), resumed after a kill.
  package var resumable = false
  /// `--queue`: keep the bytes in the data folder and an outbox entry, and return at once;
  /// `courier sync` sends it.
  package var queue = false
  /// `--allow-expensive`: a queued upload may go over a metered network (decision 2610).
  package var allowExpensive = false
  /// `--interop N`: the IETF draft's interop version to speak (3 to 8), the only one tried.
  package var interop: IETFInterop?

  /// One extra text field.
  package struct Field: Sendable, Equatable {
    /// The name.
    package var name: String
    /// The value.
    package var value: String

    /// Creates a field.
    /// - Parameters:
    ///   - name: the name.
    ///   - value: the value.
    package init(name: String, value: String) {
      self.name = name
      self.value = value
    }
  }

  /// Creates options for a file.
  /// - Parameter file: the file.
  package init(file: String) { self.file = file }
}
