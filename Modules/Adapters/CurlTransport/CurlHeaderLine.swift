// Pure and free of libcurl, so that Fuzz/ can compile this file on its own (scripts/fuzz).

/// One line of a response head, as libcurl hands it over (with its CRLF).
enum CurlHeaderLine: Equatable {
  /// `HTTP/…`: a status line.
  case status
  /// `name: value`, both without surrounding spaces and tabs.
  case field(name: String, value: String)
  /// The blank line, a folded continuation or a line without a colon.
  case other

  /// Splits a head line by bytes: this runs for every field of every response, and
  /// Foundation's `trimmingCharacters(in:)` cost 4 % of a whole replay's CPU.
  /// - Parameter bytes: the line.
  init(_ bytes: UnsafeRawBufferPointer) {
    func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
    func isEnd(_ byte: UInt8) -> Bool { byte == 0x0D || byte == 0x0A }
    var end = bytes.count
    while end > 0, isEnd(bytes[end - 1]) { end -= 1 }
    guard end > 0, !isSpace(bytes[0]) else {
      self = .other
      return
    }
    if end >= 5, bytes[0] == 0x48, bytes[1] == 0x54, bytes[2] == 0x54, bytes[3] == 0x50,
      bytes[4] == 0x2F
    {
      self = .status
      return
    }
    guard let colon = bytes[..<end].firstIndex(of: 0x3A) else {
      self = .other
      return
    }
    var nameEnd = colon
    while nameEnd > 0, isSpace(bytes[nameEnd - 1]) { nameEnd -= 1 }
    var valueStart = colon + 1
    while valueStart < end, isSpace(bytes[valueStart]) { valueStart += 1 }
    var valueEnd = end
    // A bare CR counts as a space (RFC 9112 §2.2), so none is left at the value's end.
    while valueEnd > valueStart, isSpace(bytes[valueEnd - 1]) || bytes[valueEnd - 1] == 0x0D {
      valueEnd -= 1
    }
    self = .field(
      name: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<nameEnd]), as: UTF8.self),
      value: String(
        decoding: UnsafeRawBufferPointer(rebasing: bytes[valueStart..<valueEnd]), as: UTF8.self))
  }
}
