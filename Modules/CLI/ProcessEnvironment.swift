#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The process environment as a dictionary, read straight from `environ`.
///
/// `ProcessInfo.processInfo.environment` builds the same dictionary through Foundation's
/// slow string decoding: a seventh of what `courier --version` cost (callgrind, issue 14).
public enum ProcessEnvironment {
  /// Every `NAME=value` entry of `environ`; an entry without `=` is skipped, and of two
  /// entries with the same name the first wins, as `getenv` reads them.
  public static func current() -> [String: String] {
    #if canImport(Darwin)
      guard var entry = _NSGetEnviron().pointee else { return [:] }
    #else
      guard var entry = environ as UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? else {
        return [:]
      }
    #endif
    var result: [String: String] = [:]
    while let pointer = entry.pointee {
      entry += 1
      guard let equals = strchr(pointer, Int32(UInt8(ascii: "="))) else { continue }
      let name = String(
        decoding: UnsafeRawBufferPointer(start: pointer, count: equals - pointer), as: UTF8.self)
      if result[name] == nil { result[name] = String(cString: equals + 1) }
    }
    return result
  }
}
