import Foundation

/// One part of a `multipart/form-data` body: a text field or a file.
public struct MultipartPart: Sendable, Equatable {
  /// Where a part's content comes from.
  public enum Content: Sendable, Equatable {
    /// A text value, sent as UTF-8.
    case text(String)
    /// Bytes held in memory (a small generated file).
    case bytes(Data)
    /// A whole file on disk, of the size it had when it was looked at. The encoder never reads
    /// it; the writer (or a streaming transport) does, and fails if the size changed.
    case file(URL, size: Int64)
  }

  /// The field name.
  public var name: String
  /// The filename, for a file part (nil for a text field).
  public var filename: String?
  /// The media type, for a file part (nil for a text field).
  public var contentType: String?
  /// Where the part's bytes come from: inline data or a file read while sending.
  public var content: Content

  /// Creates a part.
  /// - Parameters:
  ///   - name: the field name.
  ///   - filename: the filename; nil for a text field.
  ///   - contentType: the media type; nil for a text field.
  ///   - content: the content.
  public init(name: String, filename: String?, contentType: String?, content: Content) {
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
  public static func file(
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
  public static func data(_ name: String, filename: String, contentType: String, data: Data)
    -> MultipartPart
  {
    MultipartPart(name: name, filename: filename, contentType: contentType, content: .bytes(data))
  }
}

/// A piece of a body: bytes in memory or a range of a file. A body is a sequence of them with
/// a known total length, so it can be written to a file or streamed without one.
public enum MultipartSegment: Sendable, Equatable {
  /// Bytes in memory.
  case bytes(Data)
  /// `length` bytes of a file from `offset`; `fileSize` is the size the file must still have.
  case file(URL, offset: Int64, length: Int64, fileSize: Int64)

  /// The segment's length in bytes.
  public var length: Int64 {
    switch self {
    case .bytes(let data): return Int64(data.count)
    case .file(_, _, let length, _): return length
    }
  }
}

/// A form: an ordered list of parts, encoded into a body layout.
public struct MultipartForm: Sendable, Equatable {
  /// The parts, in the order they are sent.
  public var parts: [MultipartPart]

  /// Creates a form.
  /// - Parameter parts: the parts.
  public init(_ parts: [MultipartPart] = []) { self.parts = parts }

  /// Appends a part.
  /// - Parameter part: the part.
  public mutating func append(_ part: MultipartPart) { parts.append(part) }

  /// Lays out the body: every header, delimiter and text value as bytes, every file as a
  /// range to read later. Reads no file.
  /// - Parameter boundary: the boundary (a fresh random one by default).
  /// - Returns: the layout.
  /// - Throws: `CourierError` `invalidInput` naming the field when a name, filename, media
  ///   type or value cannot be sent safely.
  public func layout(boundary: MultipartBoundary = .random()) throws -> MultipartBodyLayout {
    var segments: [MultipartSegment] = []
    var pending = Data()
    let delimiter = "--\(boundary.value)"
    for (index, part) in parts.enumerated() {
      if index > 0 { pending.append(contentsOf: "\r\n".utf8) }
      pending.append(contentsOf: "\(delimiter)\r\n".utf8)
      pending.append(contentsOf: try headers(of: part).utf8)
      switch part.content {
      case .text(let value):
        if value.contains(delimiter) {
          throw CourierError(
            .invalidInput, code: "multipart_invalid_value",
            serverMessage:
              "The value of field \"\(MultipartEscaping.printableForMessage(part.name))\" "
              + "contains the multipart boundary and can't be sent.",
            field: part.name, context: "multipart encoding")
        }
        pending.append(contentsOf: value.utf8)
      case .bytes(let data):
        pending.append(data)
      case .file(let url, let size):
        guard size >= 0 else {
          throw CourierError(
            .invalidInput, code: "multipart_invalid_size",
            serverMessage: "The file of field \"\(part.name)\" has a negative size.",
            field: part.name, context: "multipart encoding")
        }
        if !pending.isEmpty { segments.append(.bytes(pending)) }
        pending = Data()
        if size > 0 { segments.append(.file(url, offset: 0, length: size, fileSize: size)) }
      }
    }
    pending.append(contentsOf: "\(parts.isEmpty ? "" : "\r\n")\(delimiter)--\r\n".utf8)
    segments.append(.bytes(pending))
    return MultipartBodyLayout(boundary: boundary, segments: segments)
  }

  private func headers(of part: MultipartPart) throws -> String {
    let name = try MultipartEscaping.quotedParameter(
      part.name, what: "field name", field: part.name)
    var text = "Content-Disposition: form-data; name=\"\(name)\""
    if let filename = part.filename {
      let base = try MultipartEscaping.baseName(filename, field: part.name)
      let escaped = try MultipartEscaping.quotedParameter(base, what: "filename", field: part.name)
      text += "; filename=\"\(escaped)\""
    }
    text += "\r\n"
    if let contentType = part.contentType {
      let checked = try MultipartEscaping.checkedContentType(contentType, field: part.name)
      text += "Content-Type: \(checked)\r\n"
    } else if part.filename != nil {
      text += "Content-Type: application/octet-stream\r\n"
    }
    return text + "\r\n"
  }
}

/// A body laid out as segments with a known total length, and the header that goes with it.
public struct MultipartBodyLayout: Sendable, Equatable {
  /// The boundary the body uses.
  public let boundary: MultipartBoundary
  /// The segments, in order; adjacent in-memory bytes are already merged.
  public let segments: [MultipartSegment]

  /// Creates a layout.
  /// - Parameters:
  ///   - boundary: the boundary.
  ///   - segments: the segments.
  public init(boundary: MultipartBoundary, segments: [MultipartSegment]) {
    self.boundary = boundary
    self.segments = segments
  }

  /// The total length in bytes: the `Content-Length` to send.
  public var contentLength: Int64 { segments.reduce(0) { $0 + $1.length } }

  /// The `Content-Type` header value, carrying the same boundary.
  public var contentType: String { "multipart/form-data; boundary=\(boundary.parameterValue)" }

  /// Whether every byte is already in memory (no file to read).
  public var isInMemory: Bool {
    segments.allSatisfy { if case .bytes = $0 { true } else { false } }
  }

  /// The whole body, when every segment is in memory.
  public var inMemoryBody: Data? {
    guard isInMemory else { return nil }
    var body = Data()
    body.reserveCapacity(Int(contentLength))
    for case .bytes(let data) in segments { body.append(data) }
    return body
  }
}
