import CourierDomain
import CourierPorts
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension SQLiteLocalStore: RecordFieldsReading {
  /// A collection's records with chosen members of their local payload: each payload is checked
  /// as a whole read checks it, but only the strings asked for are made (decision 1404). A
  /// payload that is not JSON is reported as `corrupt`, as a whole read reports it; the server's
  /// copy is not read at all.
  /// - Parameters:
  ///   - names: payload members, in order.
  ///   - collection: the collection.
  /// - Returns: the records' fields, by id.
  /// - Throws: `StoreError`: `corrupt` for a payload that is not JSON.
  package func fields(_ names: [String], in collection: String) throws -> [RecordFields] {
    // The payload's bytes straight from SQLite, and only the members asked for made into
    // strings (JSONStringMembers, which refuses what a whole read refuses).
    let sql =
      "SELECT id, state, server_version, server_updated_at, payload FROM records"
      + " WHERE collection = ? ORDER BY id"
    let path = self.path
    let members = JSONStringMembers(names)
    let none = [String?](repeating: nil, count: names.count)
    let states = LocalState.allCases.map { (bytes: Array($0.rawValue.utf8), state: $0) }
    return try read { reader in
      guard let reader = reader as? SQLiteReader else { return [] }
      return try reader.connection.query(sql, [.text(collection)]) { row in
        func damaged() -> StoreError {
          StoreError(
            .corrupt,
            "The local store \(path) holds an unreadable row (records \(collection)/"
              + "\(row.text(0) ?? "?")); it was left as it is.",
            path: path)
        }
        // The state compared as bytes: a String per row only to look it up cost as much as
        // the id's (issue 14).
        let state = row.withBytes(1) { bytes in
          bytes.flatMap { bytes in states.first { $0.bytes.elementsEqual(bytes) }?.state }
        }
        guard let id = row.text(0), let state else { throw damaged() }
        let values = try row.withBytes(4) { bytes -> [String?]? in
          guard let bytes else { return nil }
          do {
            return try members.read(bytes)
          } catch {
            throw damaged()
          }
        }
        return RecordFields(
          id: id, state: state, isDeleted: values == nil, version: row.int(2).map { Int($0) },
          updatedAt: row.double(3).map(Date.init(timeIntervalSinceReferenceDate:)),
          values: values ?? none)
      }
    }
  }
}
