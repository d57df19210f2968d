// libFuzzer target: JSONValue(parsing:) (Modules/System/JSONByteParser.swift). Built by scripts/fuzz.
import CourierDomain
import Foundation

/// Bytes → parse; what parses must survive encode → parse unchanged, and the `String` entry
/// point must agree with the `Data` one.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = Data(UnsafeBufferPointer(start: data, count: size))
  let value: JSONValue
  do {
    value = try JSONValue(parsing: bytes)
  } catch {
    check(error.offset >= 0 && error.offset <= size, "offset outside the input: \(error)")
    return 0
  }
  if let text = String(validating: bytes, as: UTF8.self) {
    check((try? JSONValue(parsing: text)) == value, "String and Data parses differ")
  }
  let encoded = value.jsonText
  guard let again = try? JSONValue(parsing: encoded) else {
    fatalError("our own encoding does not parse: \(encoded)")
  }
  check(again == value, "encode → parse changed the value: \(encoded)")
  return 0
}
