extension LocalRecord {
  /// The local payload of a record that is not deleted: what a typed record reads.
  /// - Throws: `CourierError` of kind `decoding` (`record_deleted`) for a deletion.
  package func livePayload() throws -> JSONValue {
    guard let payload else {
      throw CourierError(.decoding, code: "record_deleted", field: nil, context: "\(key)")
    }
    return payload
  }
}
