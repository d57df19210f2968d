import CourierDomain
import CourierFileStore
import CourierPorts
import CourierSQLite
import Foundation
import Synchronization
import Testing

/// The file store's temporary files do not follow a planted symlink.
@Suite("File store temporary files")
struct FileStoreTemporaryFileTests {
  @Test("a symlink planted at records.json.tmp is replaced, its target untouched")
  func plantedSymlink() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store"
    let victim = directory.path + "/victim"
    try Data("untouched".utf8).write(to: URL(fileURLWithPath: victim))
    let store = try FileLocalStore(directory: path)
    try store.enqueue(Fixture.operation("r", .create, "x"))
    try FileManager.default.createSymbolicLink(
      atPath: path + "/records.json.tmp", withDestinationPath: victim)
    try FileManager.default.createSymbolicLink(
      atPath: path + "/outbox.journal.tmp", withDestinationPath: victim)
    try store.compact()
    store.close()
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched")
    let reopened = try FileLocalStore(directory: path)
    #expect(try reopened.pending().count == 1)
    reopened.close()
  }
}
