// libFuzzer target: CommandLineParser.parse (Modules/CLI/CommandLineParser.swift, the
// command table and the types they return, compiled into this target by scripts/fuzz).
import Foundation

/// The bytes are argv without the program name, split at NUL: it parses, or throws a
/// `UsageError`; nothing else.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommandLine(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  let arguments =
    size == 0
    ? []
    : bytes.split(separator: 0, omittingEmptySubsequences: false).map {
      String(decoding: $0, as: UTF8.self)
    }
  do {
    _ = try CommandLineParser.parse(arguments)
  } catch is UsageError {
  } catch {
    fatalError("not a UsageError: \(error)")
  }
  return 0
}
