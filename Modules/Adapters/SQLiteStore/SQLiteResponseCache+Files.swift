import CourierDomain
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The cache's files (named at random, written whole and synced before the index names them)
/// and the encodings of its stored fields.
extension SQLiteResponseCache {
  static func newName() -> String {
    var generator = SystemRandomNumberGenerator()
    let high = generator.next() as UInt64
    let low = generator.next() as UInt64
    return hex(high) + hex(low)
  }

  static func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }

  static func write(_ data: Data, to path: String) throws {
    let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw StoreError(
        .io, "The response cache could not create \(path).", path: path,
        underlying: String(cString: strerror(errno)))
    }
    defer { _ = Glibc.close(fd) }
    var failed: Int32 = 0
    data.withUnsafeBytes { raw in
      guard let start = raw.baseAddress else { return }
      var offset = 0
      while offset < raw.count {
        let written = Glibc.write(fd, start + offset, raw.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          failed = errno
          return
        }
        offset += written
      }
    }
    if failed == 0, fsync(fd) != 0 { failed = errno }
    if failed != 0 {
      unlink(path)
      throw StoreError(
        .io, "The response cache could not write \(path).", path: path,
        underlying: String(cString: strerror(failed)))
    }
  }

  static func syncFolder(_ path: String) {
    let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = fsync(fd)
    _ = Glibc.close(fd)
  }

  static func encodeFields(_ fields: HTTPFields) -> String {
    let pairs = fields.map { [$0.name.rawName, $0.value] }
    let data = (try? JSONEncoder().encode(pairs)) ?? Data("[]".utf8)
    return String(decoding: data, as: UTF8.self)
  }

  static func decodeFields(_ text: String) -> HTTPFields {
    let pairs = (try? JSONDecoder().decode([[String]].self, from: Data(text.utf8))) ?? []
    var fields = HTTPFields()
    for pair in pairs where pair.count == 2 {
      if let name = HTTPField.Name(pair[0]) { fields.append(HTTPField(name: name, value: pair[1])) }
    }
    return fields
  }

  static func encodeVary(_ values: [String: String]) -> String {
    let pairs = values.sorted { $0.key < $1.key }.map { [$0.key, $0.value] }
    let data = (try? JSONEncoder().encode(pairs)) ?? Data("[]".utf8)
    return String(decoding: data, as: UTF8.self)
  }

  static func decodeVary(_ text: String) -> [String: String] {
    let pairs = (try? JSONDecoder().decode([[String]].self, from: Data(text.utf8))) ?? []
    var values: [String: String] = [:]
    for pair in pairs where pair.count == 2 { values[pair[0]] = pair[1] }
    return values
  }
}

/// Reads a whole file (a cached body).
struct OpenFileReader {
  let fd: Int32
  let path: String

  init(_ path: String) throws {
    self.path = path
    fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else {
      throw StoreError(
        .io, "The response cache could not read \(path).", path: path,
        underlying: String(cString: strerror(errno)))
    }
  }

  func readAll() throws -> Data {
    defer { _ = Glibc.close(fd) }
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw StoreError(
          .io, "The response cache could not read \(path).", path: path,
          underlying: String(cString: strerror(errno)))
      }
      if count == 0 { return data }
      data.append(contentsOf: buffer[0..<count])
    }
  }
}
