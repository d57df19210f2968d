#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One part of a `multipart/form-data` body: a text field or a file.
public struct MultipartPart: Sendable, Equatable {
  /// Where a part's content comes from.
  package enum Content: Sendable, Equatable {
    /// A text value, sent as UTF-8.
    case text(String)
    /// Bytes held in memory (a small generated file).
    case bytes(Data)
    /// A whole file on disk, of the size it had when it was looked at. The encoder never reads
    /// it; the writer (or a streaming transport) does, and fails if the size changed.
    case file(URL, size: Int64)
  }

  /// The field name.
  package var name: String
  /// The filename, for a file part (nil for a text field).
  package var filename: String?
  /// The media type, for a file part (nil for a text field).
  package var contentType: String?
  /// Where the part's bytes come from: inline data or a file read while sending.
  package var content: Content

  /// Creates a part.
  /// - Parameters:
  ///   - name: the field name.
  ///   - filename: the filename; nil for a text field.
  ///   - contentType: the media type; nil for a text field.
  ///   - content: the content.
  package init(name: String, filename: String?, contentType: String?, content: Content) {
    self.name = name
    self.filename = filename
    self.contentType = contentType
    self.content = content
  }

  /// A text field.
  /// - Parameters:
  ///   - name: the field name.
  ///   - value: the value.
  /// - Returns: the part.
  public static func text(_ name: String, _ value: String) -> MultipartPart {
    MultipartPart(name: name, filename: nil, contentType: nil, content: .text(value))
  }

  /// A file part read from disk when the body is written.
  /// - Parameters:
  ///   - name: the field name.
  ///   - filename: the filename sent (its directory part is dropped).
  ///   - contentType: the media type.
  ///   - url: the file.
  ///   - size: the file's size now.
  /// - Returns: the part.
  package static func file(
    _ name: String, filename: String, contentType: String, url: URL, size: Int64
  ) -> MultipartPart {
    MultipartPart(
      name: name, filename: filename, contentType: contentType, content: .file(url, size: size))
  }

  /// A file part whose bytes are in memory.
  /// - Parameters:
  ///   - name: the field name.
  ///   - filename: the filename sent (its directory part is dropped).
  ///   - contentType: the media type.
  ///   - data: the bytes.
  /// - Returns: the part.
  package static func data(_ name: String, filename: String, contentType: String, data: Data)
    -> MultipartPart
  {
    MultipartPart(name: name, filename: filename, contentType: contentType, content: .bytes(data))
  }
}
