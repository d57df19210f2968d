// libFuzzer target: the test-only multipart reader (Tests/CoreTests/MultipartTestParser.swift,
// compiled into this target by scripts/fuzz). Built by scripts/fuzz.

/// The bytes are a boundary, a NUL, then a body: it parses or throws its `Failure`, never a
/// trap; the parts' data are disjoint pieces of the body.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipart(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let split = bytes.firstIndex(of: 0), split > 0, split <= 70 else { return 0 }
  let boundary = String(decoding: bytes[..<split], as: UTF8.self)
  let body = Array(bytes[(split + 1)...])
  do {
    let parts = try MultipartTestParser(boundary: boundary).parse(body)
    let total = parts.reduce(0) { $0 + $1.data.count }
    check(total <= body.count, "\(total) bytes of parts in a \(body.count)-byte body")
  } catch is MultipartTestParser.Failure {
  } catch {
    fatalError("not a Failure: \(error)")
  }
  return 0
}
