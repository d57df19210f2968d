/// How field names and filenames are written into `Content-Disposition`, as browsers (the
/// WHATWG multipart/form-data encoding algorithm) and curl write them: `"` becomes `%22`, CR
/// `%0D`, LF `%0A`; every other byte, raw UTF-8 included, is kept; `filename*=` is never sent
/// (RFC 7578 §4.2). A character that cannot be sent safely is an error, never an injection.
package enum MultipartEscaping {
  /// Escapes a field name or filename for a quoted `Content-Disposition` parameter.
  /// - Parameters:
  ///   - text: the name or filename.
  ///   - what: what it is, for the error (`field name`, `filename`).
  ///   - field: the field it belongs to, for the error.
  /// - Returns: the escaped text, to put between double quotes.
  /// - Throws: `CourierError` `invalidInput` with code `multipart_invalid_name` when `text` holds
  ///   NUL, another control character (other than CR, LF and tab) or a backslash.
  package static func quotedParameter(_ text: String, what: String, field: String) throws
    -> String
  {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "%22"
      case "\r": out += "%0D"
      case "\n": out += "%0A"
      case "\t": out.unicodeScalars.append(scalar)
      case "\\":
        // Browsers send it raw, but werkzeug drops it, and a trailing one swallows the closing
        // quote in Go, python-multipart and werkzeug alike, escaped or not (Docs/decisions/0302).
        throw invalid(
          what: what, field: field, reason: "contains a backslash, which servers read differently")
      case "\0":
        throw invalid(what: what, field: field, reason: "contains a NUL character")
      case "\u{01}"..."\u{1F}", "\u{7F}":
        throw invalid(
          what: what, field: field,
          reason: "contains the control character U+\(hex4(scalar.value))")
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  /// The last path component of a filename, whichever separator (`/` or `\`) it uses, so no
  /// directory of the sender's disk leaks and no server can be led to write `../../etc/passwd`.
  /// - Parameters:
  ///   - filename: the filename as given, maybe a path.
  ///   - field: the field it belongs to, for the error.
  /// - Returns: the base name.
  /// - Throws: `CourierError` `invalidInput` with code `multipart_invalid_name` when nothing
  ///   usable is left (empty, `.` or `..`).
  package static func baseName(_ filename: String, field: String) throws -> String {
    let base =
      filename.split(
        omittingEmptySubsequences: false, whereSeparator: { $0 == "/" || $0 == "\\" }
      ).last.map(String.init) ?? ""
    if base.isEmpty || base == "." || base == ".." {
      throw invalid(
        what: "filename", field: field,
        reason: filename.isEmpty
          ? "is empty" : "\"\(filename)\" has no file name after its directory part")
    }
    return base
  }

  /// Checks a part's media type: printable ASCII only, so it cannot end the header line.
  /// - Parameters:
  ///   - contentType: the media type, such as `image/jpeg`.
  ///   - field: the field it belongs to, for the error.
  /// - Returns: the media type, unchanged.
  /// - Throws: `CourierError` `invalidInput` with code `multipart_invalid_content_type`.
  package static func checkedContentType(_ contentType: String, field: String) throws -> String {
    let bytes = Array(contentType.utf8)
    let slash = bytes.firstIndex(of: UInt8(ascii: "/"))
    let printable = bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    guard printable, let slash, slash > 0, slash < bytes.count - 1 else {
      throw CourierError(
        .invalidInput, code: "multipart_invalid_content_type",
        serverMessage:
          "The content type of field \"\(printableForMessage(field))\" is not a valid media type.",
        field: field, context: "multipart encoding")
    }
    return contentType
  }

  static func invalid(what: String, field: String, reason: String) -> CourierError {
    CourierError(
      .invalidInput, code: "multipart_invalid_name",
      serverMessage:
        "The \(what) of field \"\(printableForMessage(field))\" can't be sent: it \(reason).",
      field: field, context: "multipart encoding")
  }

  /// A name made safe to show in a message: control characters become `U+XXXX`.
  static func printableForMessage(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      if scalar.value < 0x20 || scalar.value == 0x7F {
        out += "U+\(hex4(scalar.value))"
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  static func hex4(_ value: UInt32) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - text.count)) + text
  }
}
