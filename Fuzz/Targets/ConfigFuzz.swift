// libFuzzer target: a config file through ConfigLoader.load (Modules/Composition/
// CourierConfig.swift, compiled into this target by scripts/fuzz). Built by scripts/fuzz.
import CourierDomain
import Foundation

/// The bytes are the config file: it loads, or throws a `ConfigError`; nothing else.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let file = Data(UnsafeBufferPointer(start: data, count: size))
  do {
    let config = try ConfigLoader.load(
      flags: ["config": "/fuzz/config.json"], environment: ["HOME": "/nonexistent"],
      readFile: { _ in file })
    check(config.configFile == "/fuzz/config.json", "the file was not read")
    check(config.retry.maxAttempts > 0, "max_attempts \(config.retry.maxAttempts)")
    check(config.timeout > .zero, "timeout \(config.timeout)")
  } catch is ConfigError {
  } catch {
    fatalError("not a ConfigError: \(error)")
  }
  return 0
}
