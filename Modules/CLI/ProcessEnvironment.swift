#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The process environment as a dictionary, read straight from `environ`.
///
/// `ProcessInfo.processInfo.environment` builds the same dictionary through Foundation's
/// slow string decoding: a seventh of what `courier --version` cost.
package enum ProcessEnvironment {
  /// Every `NAME=value` entry of `environ`; an entry without `=` is skipped, and of two
  /// entries with the same name the first wins, as `getenv` reads them.
  package static func current() -> [String: String] {
    #if canImport(Darwin)
      guard let entries = _NSGetEnviron().pointee else { return [:] }
    #else
      guard let entries = environ as UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? else {
        return [:]
      }
    #endif
    return dictionary(UnsafePointer(entries))
  }

  /// The dictionary of a NULL-terminated `environ`-like list of `NAME=value` C strings.
  ///
  /// Sized once from the count, then filled from the last entry to the first with one
  /// hash per entry, so that the first of two same-named entries is the one that stays: a
  /// lookup before each insertion and the table's growth were half of what reading the
  /// environment cost.
  static func dictionary(_ entries: UnsafePointer<UnsafeMutablePointer<CChar>?>) -> [String: String]
  {
    var count = 0
    while entries[count] != nil { count += 1 }
    var result: [String: String] = [:]
    result.reserveCapacity(count)
    var index = count
    while index > 0 {
      index -= 1
      guard let pointer = entries[index],
        let equals = strchr(pointer, Int32(UInt8(ascii: "=")))
      else { continue }
      let name = String(
        decoding: UnsafeRawBufferPointer(start: pointer, count: equals - pointer), as: UTF8.self)
      result[name] = String(cString: equals + 1)
    }
    return result
  }
}
