// libFuzzer target: Double.fixed(digits:) (Modules/System/TextScalars.swift) against printf.
// Built by scripts/fuzz; the unit test draws a few thousand values, this searches for long.
import Foundation

/// Eight bytes are a double's bit pattern (little-endian), a ninth the digits (0 to 6): every
/// finite double prints exactly what `%.Nf` prints.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFixedDigits(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  guard bytes.count >= 8 else { return 0 }
  var bits: UInt64 = 0
  for (index, byte) in bytes.prefix(8).enumerated() { bits |= UInt64(byte) << (8 * index) }
  let value = Double(bitPattern: bits)
  guard value.isFinite else { return 0 }
  let digits = bytes.count > 8 ? Int(bytes[8] % 7) : 2
  let ours = value.fixed(digits: digits)
  let printf = String(format: "%.\(digits)f", value)
  check(ours == printf, "\(value) %.\(digits)f: fixed \(ours), printf \(printf)")
  return 0
}
