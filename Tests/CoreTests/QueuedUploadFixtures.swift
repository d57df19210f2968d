import CourierCore
import CourierDomain
import CourierPorts
import Foundation
import Synchronization

/// A queued-upload store for core tests: bodies in a temporary folder (a transport reads file
/// ranges), resume records and proofs in memory, and what it was asked.
final class FolderQueuedUploadStore: QueuedUploadStore, Sendable {
  final class Records: ResumableUploadStore, Sendable {
    let saved = Mutex<[String: ResumableUpload]>([:])
    func load(_ key: String) -> ResumableUpload? { saved.withLock { $0[key] } }
    func save(_ record: ResumableUpload, as key: String) throws {
      saved.withLock { $0[key] = record }
    }
    func remove(_ key: String) { _ = saved.withLock { $0.removeValue(forKey: key) } }
  }

  let folder: URL
  let records = Records()
  let delivered = Mutex<Set<String>>([])
  var resumeRecords: any ResumableUploadStore { records }

  init() throws {
    folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-queued-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: folder) }

  func keep<T>(_ source: URL, as id: String, commit: () throws -> T) throws -> T {
    try FileManager.default.copyItem(at: source, to: body(id))
    do {
      return try commit()
    } catch {
      try? FileManager.default.removeItem(at: body(id))
      throw error
    }
  }

  func body(_ id: String) -> URL { folder.appendingPathComponent("\(id).body") }

  func markDelivered(_ id: String) throws {
    delivered.withLock { _ = $0.insert(id) }
    try? FileManager.default.removeItem(at: body(id))
    records.remove(id)
  }

  func isDelivered(_ id: String) -> Bool { delivered.withLock { $0.contains(id) } }

  func sweep(keeping live: () throws -> Set<String>) -> [String] { [] }

  let notes = Mutex<[String: String]>([:])
  func writeNote(_ text: String, _ kind: String, for id: String) throws {
    notes.withLock { $0["\(id).\(kind)"] = text }
  }
  func note(_ kind: String, for id: String) -> String? { notes.withLock { $0["\(id).\(kind)"] } }

  /// Keeps `data` as the bytes of `id`.
  func put(_ data: Data, as id: String) throws { try data.write(to: body(id)) }
}

/// Bytes that differ at every offset.
func patternedData(_ count: Int) -> Data {
  Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 11) })
}
