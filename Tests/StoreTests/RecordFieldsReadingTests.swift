import CourierDomain
import CourierPorts
import CourierSQLite
import CourierTestSupport
import Foundation
import Testing

/// A store's projection read (`RecordFieldsReading`) must answer what reading every record whole
/// and taking the members gives (`RecordFields(record, names:)`), and refuse what that refuses.
@Suite("RecordFieldsReading")
struct RecordFieldsReadingTests {
  typealias F = Fixture

  @Test("SQLite: the same fields as a whole read, for synced, local, deleted and odd records")
  func sqliteAgreesWithAWholeRead() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try SQLiteLocalStore(path: directory.path + "/store.sqlite")
    defer { store.close() }
    try store.applyServerList(
      (0..<50).map { F.server(String(format: "s%02d", $0), "Server \($0)", version: $0 + 1) },
      collection: F.collection, etag: "\"e\"", refreshedAt: F.epoch)
    let odd: [(String, JSONValue)] = [
      ("o1", .object(["title": .integer(1), "body": .string("b")])),
      ("o2", .object(["title": .string("é \"quoted\" \n line"), "other": .array([.null])])),
      ("o3", .object([:])),
      ("o4", .array([.string("title")])),
      (
        "o5", .object(["title": .string(""), "body": .string(String(repeating: "x", count: 5000))])
      ),
    ]
    for (id, payload) in odd {
      try store.applyAndEnqueue(
        .put(F.key(id), payload: payload),
        OutboxOperation(
          id: UUID(), key: F.key(id), kind: .create, payload: payload, baseVersion: nil,
          enqueuedAt: F.epoch))
    }
    try store.applyAndEnqueue(.delete(F.key("s03")), F.operation("s03", .delete, base: 4))
    try store.applyAndEnqueue(
      .put(F.key("s04"), payload: F.payload("edited")),
      F.operation("s04", .update, "edited", base: 5))

    let names = ["title", "body", "missing"]
    let projected = try store.fields(names, in: F.collection)
    let whole = try store.records(in: F.collection).map { RecordFields($0, names: names) }
    #expect(projected.count == 55)
    #expect(projected == whole)
    #expect(try store.fields(names, in: "other").isEmpty)
    #expect(
      try store.fields(["title"], in: F.collection).map(\.values) == whole.map { [$0.values[0]] })
  }

  @Test("SQLite: a payload that is not JSON is an error naming the file, as a whole read's is")
  func damagedPayload() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path + "/store.sqlite"
    let store = try SQLiteLocalStore(path: path)
    try store.applyServerList(
      [F.server("a", "A", version: 1)], collection: F.collection, etag: nil, refreshedAt: F.epoch)
    store.close()
    let sqlite = try #require(
      ["/usr/bin/sqlite3", "/bin/sqlite3"].first {
        FileManager.default.isExecutableFile(atPath: $0)
      })
    // A payload cut short, written behind the store's back (a damaged disk would do it).
    let status = try await offPool {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: sqlite)
      process.arguments = [path, "UPDATE records SET payload = '{\"title\": \"A\"' WHERE id = 'a'"]
      try process.run()
      process.waitUntilExit()
      return process.terminationStatus
    }
    try #require(status == 0)
    let reopened = try SQLiteLocalStore(path: path)
    defer { reopened.close() }
    let whole = try #require(throws: StoreError.self) { try reopened.records(in: F.collection) }
    let projected = try #require(throws: StoreError.self) {
      try reopened.fields(["title"], in: F.collection)
    }
    #expect(whole.code == .corrupt && projected.code == .corrupt)
    #expect(projected.message.contains(path))
  }
}
