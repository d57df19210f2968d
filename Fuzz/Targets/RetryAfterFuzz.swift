// libFuzzer target: RetryAfter.parse (Modules/Domain/RetryAfter.swift). Built by scripts/fuzz.
import CourierDomain
import Foundation

/// Any header value: nil, or a wait that is never negative; never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRetryAfter(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let value = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  // 2026-01-01T00:00:00Z: dates on either side of it parse.
  let now = Date(timeIntervalSince1970: 1_767_225_600)
  if let wait = RetryAfter.parse(value, now: now) {
    check(wait >= .zero, "negative wait \(wait) for \(value.debugDescription)")
  }
  return 0
}
