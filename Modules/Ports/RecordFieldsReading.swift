import CourierDomain

/// A local store that can read chosen payload members of a collection's records without
/// decoding every payload whole (a projection read): `articles list --offline` prints 10,000
/// titles without parsing 20,000 JSON documents in Swift (issue 14). Optional: a store that
/// lacks it is read whole.
package protocol RecordFieldsReading: Sendable {
  /// A collection's records, sorted by id, with the members `names` of each local payload.
  /// - Parameters:
  ///   - names: payload members, in order.
  ///   - collection: the collection.
  /// - Returns: one `RecordFields` per record, equal to `RecordFields(record, names:)` of the
  ///   record read whole.
  /// - Throws: `StoreError` when the store cannot be read, `corrupt` for a local payload that
  ///   is not JSON (as a whole read reports it; the server's copy need not be read).
  func fields(_ names: [String], in collection: String) throws -> [RecordFields]
}
