import HTTPTypes

/// The header field names Courier reads or writes that swift-http-types does not name itself
/// (it has `.location`, `.retryAfter`, `.ifMatch`, `.contentType`, `.authorization`, …): one
/// place for every spelling, so a typo cannot make a lookup miss.
extension HTTPField.Name {
  /// `Idempotency-Key`: the key a server deduplicates a retried write on (decision 0412).
  package static let idempotencyKey = courier("Idempotency-Key")
  /// `Idempotent-Replayed`: the server's word that an answer is the stored one of a key.
  package static let idempotentReplayed = courier("Idempotent-Replayed")
  /// `Tus-Resumable`: the tus version every tus request carries (decision 1301).
  package static let tusResumable = courier("Tus-Resumable")
  /// `Tus-Version`: the versions a tus server speaks, in its `OPTIONS` answer.
  package static let tusVersion = courier("Tus-Version")
  /// `Tus-Extension`: the extensions a tus server offers.
  package static let tusExtension = courier("Tus-Extension")
  /// `Tus-Checksum-Algorithm`: the checksums a tus server verifies.
  package static let tusChecksumAlgorithm = courier("Tus-Checksum-Algorithm")
  /// `Tus-Max-Size`: the largest upload a tus server takes.
  package static let tusMaxSize = courier("Tus-Max-Size")
  /// `Upload-Offset`: where a tus upload stands.
  package static let uploadOffset = courier("Upload-Offset")
  /// `Upload-Length`: a tus upload's whole length.
  package static let uploadLength = courier("Upload-Length")
  /// `Upload-Metadata`: a tus upload's metadata (`Tus.metadata(_:)`).
  package static let uploadMetadata = courier("Upload-Metadata")
  /// `Upload-Checksum`: the checksum of a tus chunk.
  package static let uploadChecksum = courier("Upload-Checksum")
  /// `Courier-Photo-Id`: the reference backend names the photo a finished tus upload became.
  package static let courierPhotoID = courier("Courier-Photo-Id")
  /// `Courier-Cache`: set by the caching middleware on a reply it answered from its store
  /// (`hit`, `revalidated`, `stale`), never sent (decision 2512).
  package static let courierCache = courier("Courier-Cache")
  /// `Repr-Digest` (RFC 9530): digests of the whole representation, a structured-field
  /// dictionary such as `sha-256=:BASE64:`.
  package static let reprDigest = courier("Repr-Digest")

  /// `Upload-Complete`: whether a request's content ends the representation (an sf-boolean).
  package static let uploadComplete = courier("Upload-Complete")
  /// `Upload-Incomplete`: interop 3's completeness field, the inverse of `Upload-Complete`.
  package static let uploadIncomplete = courier("Upload-Incomplete")
  /// `Upload-Draft-Interop-Version`: the draft iteration a client or server speaks.
  package static let uploadDraftInteropVersion = courier("Upload-Draft-Interop-Version")
  /// `Upload-Limit`: the server's limits (`max-size`, `max-append-size`, …).
  package static let uploadLimit = courier("Upload-Limit")
  /// `Accept-Patch` (RFC 5789): the media types a resource takes in a `PATCH`.
  package static let acceptPatch = courier("Accept-Patch")

  /// A name known to be a token.
  private static func courier(_ name: String) -> HTTPField.Name {
    guard let valid = HTTPField.Name(name) else { preconditionFailure("not a token: \(name)") }
    return valid
  }
}
