// libFuzzer target: CurlHeaderLine (Modules/Adapters/CurlTransport/CurlHeaderLine.swift,
// compiled into this target by scripts/fuzz). Built by scripts/fuzz.

/// Any line as libcurl hands it over (so up to its first LF): status, field, end or other,
/// never a trap; a status line starts `HTTP/` and its code has three digits; a field's name and
/// value carry no surrounding spaces or tabs, the value no line end.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeaderLine(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  let lineEnd = bytes.firstIndex(of: 0x0A).map { $0 + 1 } ?? size
  let line = CurlHeaderLine(UnsafeRawBufferPointer(rebasing: bytes[..<lineEnd]))
  if case .status(let code) = line {
    check(Array(bytes.prefix(5)) == Array("HTTP/".utf8), "a status line without HTTP/")
    check((0...999).contains(code), "status code \(code)")
  }
  if case .field(let name, let value) = line {
    let blank: Set<UInt8> = [0x20, 0x09]
    check(!name.utf8.contains(0x3A), "a colon in the name \(name.debugDescription)")
    for text in [name, value] {
      check(
        !(text.utf8.first.map(blank.contains) ?? false)
          && !(text.utf8.last.map(blank.contains) ?? false),
        "untrimmed \(text.debugDescription)")
    }
    check(value.utf8.last != 0x0A && value.utf8.last != 0x0D, "a line end kept")
  }
  return 0
}
