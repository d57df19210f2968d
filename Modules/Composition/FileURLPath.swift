#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A file URL's path, as `URL.path` gives it, without Foundation's decoding.
///
/// The first `URL.path` of a process builds a `Set<UInt8>` inside Foundation, whose generic
/// metadata has the runtime look `UInt8: Hashable` up by scanning every conformance record of
/// the binary: 0.35 M instructions, a twelfth of an offline `courier articles add`. The
/// percent-encoded path is read as it is stored, and decoded here.
enum FileURLPath {
  /// The path of a file URL: percent escapes decoded, the trailing `/` of a folder dropped
  /// (but for `/` itself), as `URL.path` has it.
  /// - Parameter url: a file URL.
  /// - Returns: the path.
  static func of(_ url: URL) -> String {
    var bytes = Array(url.path(percentEncoded: true).utf8)
    if bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
    guard bytes.contains(UInt8(ascii: "%")) else { return String(decoding: bytes, as: UTF8.self) }
    var decoded: [UInt8] = []
    decoded.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
        let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
      {
        decoded.append(high << 4 | low)
        index += 3
      } else {
        decoded.append(bytes[index])
        index += 1
      }
    }
    return String(decoding: decoded, as: UTF8.self)
  }

  /// The path of `name` inside the folder a file URL names.
  /// - Parameters:
  ///   - name: a file name, without `/`.
  ///   - folder: the folder's file URL.
  /// - Returns: the path, as `folder.appendingPathComponent(name).path` has it.
  static func of(_ name: String, in folder: URL) -> String {
    let base = of(folder)
    return base == "/" ? "/" + name : base + "/" + name
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
  }
}
