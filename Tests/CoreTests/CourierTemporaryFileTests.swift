import CourierCore
import Foundation
import Testing

/// Temporary files carry their maker's pid; a sweep removes those whose maker is gone.
@Suite("CourierTemporaryFile")
struct CourierTemporaryFileTests {
  static let uuid = "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9"

  @Test(
    "the owner is read from names Courier made, and only from those",
    arguments: [
      ("courier-upload-4242-\(uuid).jpg", Int32(4242)),
      ("courier-multipart-7-\(uuid).body", 7),
      ("courier-upload-4242-not-a-uuid.jpg", nil),
      ("courier-upload-\(uuid).jpg", nil),  // the old form, without a pid
      ("courier-upload--1-\(uuid).jpg", nil),
      ("courier-upload-0-\(uuid).jpg", nil),
      ("courier-upload-4242-\(uuid)", nil),
      ("someone-else-4242-\(uuid).jpg", nil),
      ("courier-upload-it-\(uuid)", nil),
    ] as [(String, Int32?)])
  func owner(_ row: (String, Int32?)) {
    #expect(CourierTemporaryFile.owner(ofFileNamed: row.0) == row.1)
  }

  @Test("a sweep removes the files of gone processes and keeps everything else")
  func sweep() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-sweep-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let names = [
      "courier-upload-111-\(Self.uuid).jpg",  // gone
      "courier-multipart-111-\(UUID().uuidString).body",  // gone
      "courier-upload-222-\(Self.uuid).jpg",  // running
      "courier-upload-\(getpid())-\(Self.uuid).jpg",  // this process
      "notes-111-\(Self.uuid).txt",  // not ours
    ]
    for name in names {
      try Data("x".utf8).write(to: directory.appendingPathComponent(name))
    }
    let removed = CourierTemporaryFile.sweep(directory, isRunning: { $0 == 222 })
    #expect(Set(removed.map(\.lastPathComponent)) == Set(names.prefix(2)))
    let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    #expect(Set(left) == Set(names.dropFirst(2)))
  }

  @Test("a process that has exited counts as gone; this one as running")
  func liveness() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/true")
    try process.run()
    process.waitUntilExit()
    #expect(!CourierTemporaryFile.isRunning(process.processIdentifier))
    #expect(CourierTemporaryFile.isRunning(getpid()))
  }
}
