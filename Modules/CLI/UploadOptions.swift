#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The options of `courier upload`.
public struct UploadOptions: Sendable, Equatable {
  /// The file to send.
  public var file: String
  /// `--title`.
  public var title: String?
  /// `--field NAME=VALUE`, in order.
  public var fields: [Field] = []
  /// `--to URL` (default: BASE_URL/photos).
  public var target: String?
  /// `--max-pixels N`: the longest edge after downsampling.
  public var maxPixels: Int?
  /// `--quality Q`: JPEG quality, 1...100 or 0.01...1.0.
  public var quality: Int?
  /// `--no-compress`.
  public var noCompress = false
  /// `--resumable`: tus 1.0.0 to BASE_URL/uploads (or `--to`), resumed after a kill.
  public var resumable = false
  /// `--queue`: keep the bytes in the data folder and an outbox entry, and return at once;
  /// `courier sync` sends it.
  public var queue = false

  /// One extra text field.
  public struct Field: Sendable, Equatable {
    /// The name.
    public var name: String
    /// The value.
    public var value: String

    /// Creates a field.
    /// - Parameters:
    ///   - name: the name.
    ///   - value: the value.
    public init(name: String, value: String) {
      self.name = name
      self.value = value
    }
  }

  /// Creates options for a file.
  /// - Parameter file: the file.
  public init(file: String) { self.file = file }
}
