import CourierDomain
import CourierLinux
import Foundation
import Testing

/// The data folder made, or found, private to its owner (decision 0405).
@Suite("PrivateFiles")
struct PrivateFilesTests {
  /// What is on disk before `prepareDirectory`, below a fresh temporary folder.
  enum Before: Sendable {
    case nothing
    case folder(mode: mode_t)
    case parentOnly
    case fileAtPath
    case fileAsParent
  }

  struct Row: Sendable, CustomTestStringConvertible {
    let before: Before
    let path: String  // below the temporary folder
    let warns: Bool
    let fails: Bool
    let testDescription: String
  }

  static let rows: [Row] = [
    Row(before: .nothing, path: "a/b/data", warns: false, fails: false, testDescription: "made"),
    Row(
      before: .parentOnly, path: "a/b/data", warns: false, fails: false,
      testDescription: "the last part made"),
    Row(
      before: .folder(mode: 0o700), path: "a/b/data", warns: false, fails: false,
      testDescription: "private already: left"),
    Row(
      before: .folder(mode: 0o755), path: "a/b/data", warns: true, fails: false,
      testDescription: "readable by others: tightened, with a warning"),
    Row(
      before: .folder(mode: 0o750), path: "a//b/data/", warns: true, fails: false,
      testDescription: "doubled and trailing slashes"),
    Row(
      before: .fileAtPath, path: "a/b/data", warns: false, fails: true,
      testDescription: "a file where the folder goes"),
    Row(
      before: .fileAsParent, path: "a/b/data", warns: false, fails: true,
      testDescription: "a file as a parent"),
  ]

  @Test(arguments: rows)
  func prepares(_ row: Row) throws {
    let root = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-private-\(getpid())-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let target = root + "/a/b/data"
    switch row.before {
    case .nothing: break
    case .parentOnly:
      try FileManager.default.createDirectory(
        atPath: root + "/a/b", withIntermediateDirectories: true)
    case .folder(let mode):
      try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
      #expect(chmod(target, mode) == 0)
    case .fileAtPath:
      try FileManager.default.createDirectory(
        atPath: root + "/a/b", withIntermediateDirectories: true)
      #expect(FileManager.default.createFile(atPath: target, contents: Data("x".utf8)))
    case .fileAsParent:
      try FileManager.default.createDirectory(
        atPath: root + "/a", withIntermediateDirectories: true)
      #expect(FileManager.default.createFile(atPath: root + "/a/b", contents: Data("x".utf8)))
    }
    var warnings: [String] = []
    let path = root + "/" + row.path
    if row.fails {
      #expect(throws: StoreError.self) {
        try PrivateFiles.prepareDirectory(path) { warnings.append($0) }
      }
      #expect(warnings.isEmpty)
      return
    }
    try PrivateFiles.prepareDirectory(path) { warnings.append($0) }
    var info = stat()
    #expect(stat(target, &info) == 0)
    #expect(info.st_mode & S_IFMT == S_IFDIR)
    #expect(info.st_mode & 0o777 == 0o700)
    #expect(warnings.count == (row.warns ? 1 : 0), "\(warnings)")
    if row.warns { #expect(warnings.first?.contains("made private (0700)") == true) }
  }
}
