#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A form: an ordered list of parts, encoded into a body layout.
package struct MultipartForm: Sendable, Equatable {
  /// The parts, in the order they are sent.
  package var parts: [MultipartPart]

  /// Creates a form.
  /// - Parameter parts: the parts.
  package init(_ parts: [MultipartPart] = []) { self.parts = parts }

  /// Appends a part.
  /// - Parameter part: the part.
  package mutating func append(_ part: MultipartPart) { parts.append(part) }

  /// Lays out the body: every header, delimiter and text value as bytes, every file as a
  /// range to read later. Reads no file.
  /// - Parameter boundary: the boundary (a fresh random one by default).
  /// - Returns: the layout.
  /// - Throws: `CourierError` `invalidInput` naming the field when a name, filename, media
  ///   type or value cannot be sent safely.
  package func layout(boundary: MultipartBoundary = .random()) throws -> MultipartBodyLayout {
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
