// Pure and free of libcurl, so that Fuzz/ can compile this file on its own (scripts/fuzz).

/// One line of a response head or trailer section, as libcurl hands it over (with its CRLF).
enum CurlHeaderLine: Equatable {
  /// A status line as RFC 9112 §4 spells it: `HTTP/` (the name is case-sensitive, §2.3), a
  /// digit, a dot and a digit (or one digit: libcurl writes `HTTP/2 200` for HTTP/2), one
  /// space, a three-digit code, then the end of the line or a space and a reason phrase, which
  /// may be empty. `Http/1.1 200 OK` or `HTTP/1.1  200` is `.other`.
  case status(code: Int)
  /// `name: value`, both without surrounding spaces and tabs.
  case field(name: String, value: String)
  /// The blank line that ends a head (or a trailer section).
  case end
  /// A folded continuation, a line without a colon, or a status line that is not HTTP's.
  case other

  /// Splits a head line by bytes: this runs for every field of every response, and
  /// Foundation's `trimmingCharacters(in:)` cost 4 % of a whole replay's CPU.
  /// - Parameter bytes: the line.
  init(_ bytes: UnsafeRawBufferPointer) {
    func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
    func isEnd(_ byte: UInt8) -> Bool { byte == 0x0D || byte == 0x0A }
    var end = bytes.count
    while end > 0, isEnd(bytes[end - 1]) { end -= 1 }
    guard end > 0 else {
      self = end == bytes.count ? .other : .end
      return
    }
    guard !isSpace(bytes[0]) else {
      self = .other
      return
    }
    if end >= 5, bytes[0] == 0x48, bytes[1] == 0x54, bytes[2] == 0x54, bytes[3] == 0x50,
      bytes[4] == 0x2F
    {
      self = Self.statusCode(bytes, end: end).map { .status(code: $0) } ?? .other
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

  /// The code of a line that starts with `HTTP/` and is a status line, or nil.
  /// - Parameters:
  ///   - bytes: the line.
  ///   - end: where its content ends (before the CR LF).
  private static func statusCode(_ bytes: UnsafeRawBufferPointer, end: Int) -> Int? {
    func isDigit(_ index: Int) -> Bool { index < end && bytes[index] &- 0x30 < 10 }
    guard isDigit(5) else { return nil }
    var index = 6
    if index < end, bytes[index] == 0x2E {
      guard isDigit(7) else { return nil }
      index = 8
    }
    guard index < end, bytes[index] == 0x20, isDigit(index + 1), isDigit(index + 2),
      isDigit(index + 3)
    else { return nil }
    let after = index + 4
    guard after == end || bytes[after] == 0x20 else { return nil }
    return (index + 1...index + 3).reduce(0) { $0 * 10 + Int(bytes[$1] &- 0x30) }
  }
}
