// libFuzzer target: NetlinkParser.parse (Modules/Adapters/NetlinkPathMonitor/
// NetlinkMessage.swift, compiled into this target by scripts/fuzz). Built by scripts/fuzz.

/// Any datagram: messages or a `NetlinkParseError` (typed), never a trap; each message takes
/// at least a header's 16 bytes, and a thrown offset lies inside the datagram.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNetlink(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  do {
    let messages = try NetlinkParser.parse(bytes)
    check(messages.count <= size / 16, "\(messages.count) messages in \(size) bytes")
  } catch {
    let offset: Int
    switch error {
    case .truncatedHeader(let at), .badLength(let at, _, _), .truncatedBody(let at, _),
      .badAttribute(let at, _):
      offset = at
    }
    check(offset >= 0 && offset < size, "\(error) outside \(size) bytes")
  }
  return 0
}
