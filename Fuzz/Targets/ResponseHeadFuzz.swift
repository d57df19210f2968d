// libFuzzer target: a response head as CurlTransport turns it into swift-http-types' HTTPResponse
// (CurlHeaderLine, then HTTPResponse(receivedStatus:fields:context:) of CourierDomain, compiled
// into this target by scripts/fuzz). Built by scripts/fuzz.
import CourierDomain
import HTTPTypes

/// Any status and any head lines: a response or a bad reply (`invalidResponse`), never a trap in
/// `HTTPResponse.Status` or `HTTPFields` (decision 2201). The first two bytes are the status
/// (big-endian, signed: below 0 and above 999 included), the third how often the last field is
/// repeated; the rest are lines split at LF, each split as libcurl's header callback would see
/// it. So a few bytes can ask for more fields than `HTTPFields` holds.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponseHead(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  guard bytes.count >= 3 else { return 0 }
  let status = Int(Int16(bitPattern: UInt16(bytes[0]) << 8 | UInt16(bytes[1])))
  // The third byte repeats the last field line: that many times, or 65,535 for 0xFF (past what
  // `HTTPFields` holds; rare, as building that many fields is slow).
  let repeats = bytes[2] == 0xFF ? 65_535 : Int(bytes[2])
  var fields: [(name: String, value: String)] = []
  var start = 3
  while start < bytes.count {
    let end = bytes[start...].firstIndex(of: 0x0A).map { $0 + 1 } ?? bytes.count
    if case .field(let name, let value) = CurlHeaderLine(
      UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
    {
      fields.append((name, value))
    }
    start = end
  }
  if let last = fields.last { fields += repeatElement(last, count: repeats) }
  do {
    let response = try HTTPResponse(receivedStatus: status, fields: fields, context: "GET /")
    check(response.status.code == status, "status \(status) became \(response.status.code)")
    check(response.headerFields.count == fields.count, "a field was lost or added")
    check((0...999).contains(status), "status \(status) accepted")
  } catch {
    check(error.kind == .invalidResponse, "\(error.kind) for a bad head")
  }
  return 0
}
