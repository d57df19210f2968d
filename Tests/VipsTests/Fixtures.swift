import Foundation
import Testing

/// A temporary folder for one test's images, removed when the test ends.
final class Scratch: Sendable {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-vips-\(getpid())-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  func file(_ name: String) -> URL { url.appendingPathComponent(name) }

  /// Every file name in the folder, hidden ones included (to catch leftover partial files).
  func contents() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
  }
}

enum Tool {
  /// Runs a program and returns its standard output; throws on a non-zero exit. Awaits the
  /// exit without blocking a thread of the cooperative pool (tests run in parallel on it).
  @discardableResult
  static func run(_ program: String, _ arguments: [String]) async throws -> String {
    let directory = FileManager.default.temporaryDirectory
    let outURL = directory.appendingPathComponent("courier-tool-\(UUID().uuidString).out")
    let errURL = directory.appendingPathComponent("courier-tool-\(UUID().uuidString).err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    defer {
      try? FileManager.default.removeItem(at: outURL)
      try? FileManager.default.removeItem(at: errURL)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.standardOutput = try FileHandle(forWritingTo: outURL)
    process.standardError = try FileHandle(forWritingTo: errURL)
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
      process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
      do { try process.run() } catch { continuation.resume(throwing: error) }
    }
    guard status == 0 else {
      throw ToolFailure(
        command: ([program] + arguments).joined(separator: " "),
        stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
    return (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
  }

  /// ImageMagick's real `convert` (a stand-in may shadow it earlier on PATH).
  static func convert(_ arguments: String...) async throws {
    try await run("/usr/bin/convert", arguments)
  }

  /// The `vips` command line.
  static func vips(_ arguments: String...) async throws {
    try await run("/usr/bin/vips", arguments)
  }

  /// Every metadata field libvips sees in a file (`vipsheader -a`).
  static func header(_ file: URL) async throws -> String {
    try await run("/usr/bin/vipsheader", ["-a", file.path])
  }

  /// One pixel's band values, as libvips decodes it.
  static func pixel(_ file: URL, x: Int, y: Int) async throws -> [Double] {
    try await run("/usr/bin/vips", ["getpoint", file.path, "\(x)", "\(y)"])
      .split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
  }

  /// A field of `vipsheader -f`.
  static func field(_ file: URL, _ name: String) async throws -> String {
    try await run("/usr/bin/vipsheader", ["-f", name, file.path])
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }
}

struct ToolFailure: Error, CustomStringConvertible {
  let command: String
  let stderr: String
  var description: String { "\(command) failed: \(stderr)" }
}

/// Writes an EXIF APP1 segment by hand (no exiftool needed): an orientation and/or GPS
/// coordinates, inserted right after a JPEG's SOI marker.
enum EXIF {
  static func insert(into jpeg: URL, orientation: UInt16? = nil, gps: Bool = false) throws {
    let original = try Data(contentsOf: jpeg)
    try #require(original.starts(with: [0xFF, 0xD8]))
    var tiff = TIFFWriter()
    let segment = tiff.build(orientation: orientation, gps: gps)
    var app1 = Data([0xFF, 0xE1])
    let length = UInt16(segment.count + 2)
    app1.append(contentsOf: [UInt8(length >> 8), UInt8(length & 0xFF)])
    app1.append(segment)
    var result = Data(original.prefix(2))
    result.append(app1)
    result.append(original.dropFirst(2))
    try result.write(to: jpeg)
  }

  /// Whether the bytes hold an EXIF header or a GPS tag name anywhere.
  static func containsExifOrGPS(_ file: URL) throws -> Bool {
    let data = try Data(contentsOf: file)
    let needles = [Data("Exif\0\0".utf8), Data("GPS".utf8)]
    return needles.contains { data.range(of: $0) != nil }
  }
}

/// Little-endian TIFF: IFD0 (orientation, GPS pointer) then the GPS IFD.
struct TIFFWriter {
  private var bytes: [UInt8] = []

  private mutating func u16(_ value: UInt16) {
    bytes += [UInt8(value & 0xFF), UInt8(value >> 8)]
  }

  private mutating func u32(_ value: UInt32) {
    for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((value >> shift) & 0xFF)) }
  }

  private mutating func entry(_ tag: UInt16, _ type: UInt16, _ count: UInt32, _ value: [UInt8]) {
    u16(tag)
    u16(type)
    u32(count)
    bytes += value + [UInt8](repeating: 0, count: 4 - value.count)
  }

  private static func le32(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8((value >> ($0 * 8)) & 0xFF) }
  }

  mutating func build(orientation: UInt16?, gps: Bool) -> Data {
    bytes = Array("Exif\0\0".utf8)
    bytes += [0x49, 0x49, 0x2A, 0x00]
    u32(8)
    let ifd0Count = (orientation == nil ? 0 : 1) + (gps ? 1 : 0)
    let ifd0Size = 2 + ifd0Count * 12 + 4
    let gpsOffset = UInt32(8 + ifd0Size)
    u16(UInt16(ifd0Count))
    if let orientation {
      entry(0x0112, 3, 1, [UInt8(orientation & 0xFF), UInt8(orientation >> 8)])
    }
    if gps { entry(0x8825, 4, 1, Self.le32(gpsOffset)) }
    u32(0)
    if gps {
      let gpsEntries = 5
      let rationals = gpsOffset + UInt32(2 + gpsEntries * 12 + 4)
      u16(UInt16(gpsEntries))
      entry(0x0000, 1, 4, [2, 2, 0, 0])
      entry(0x0001, 2, 2, Array("N\0".utf8))
      entry(0x0002, 5, 3, Self.le32(rationals))
      entry(0x0003, 2, 2, Array("E\0".utf8))
      entry(0x0004, 5, 3, Self.le32(rationals + 24))
      u32(0)
      // 48° 51' 29" N, 2° 17' 40" E.
      for value: UInt32 in [48, 51, 29, 2, 17, 40] {
        u32(value)
        u32(1)
      }
    }
    return Data(bytes)
  }
}
