import CourierSystem
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a download keeps beside its partial file (the sidecar, decision 2501): which URL it
/// is, the validators the partial bytes belong to, the whole length and the server's digest.
/// Written before the first byte of a body, so a partial file always has one after a kill.
package struct DownloadRecord: Codable, Equatable, Sendable {
  /// The URL downloaded.
  package var url: String
  /// The partial file's path.
  package var partial: String
  /// The `ETag` the server gave, weak or strong, as sent.
  package var etag: String?
  /// The `Last-Modified` date, as sent.
  package var lastModified: String?
  /// The whole representation's length, when announced.
  package var length: Int64?
  /// The SHA-256 of the whole representation from `Repr-Digest`, base64 as sent.
  package var digest: String?

  /// A record.
  package init(
    url: String, partial: String, etag: String? = nil, lastModified: String? = nil,
    length: Int64? = nil, digest: String? = nil
  ) {
    self.url = url
    self.partial = partial
    self.etag = etag
    self.lastModified = lastModified
    self.length = length
    self.digest = digest
  }

  /// The record a successful reply's head describes (validators, length, digest).
  /// - Parameters:
  ///   - response: a 200 (or a HEAD's 200), or a 206 whose `Content-Range` names the size.
  ///   - url: the URL.
  ///   - partial: the partial file's path.
  package init(_ response: HTTPResponse, url: String, partial: String) {
    let fields = response.headerFields
    var length: Int64?
    if response.status.code == 206, let range = fields[.contentRange] {
      length = DownloadResume.contentRange(range)?.size
    } else if let declared = fields[.contentLength] {
      length = Int64(declared)
    }
    self.init(
      url: url, partial: partial, etag: fields[.eTag], lastModified: fields[.lastModified],
      length: length,
      digest: fields[.reprDigest].flatMap(DownloadResume.sha256(reprDigest:)).map {
        Data($0).base64EncodedString()
      })
  }

  /// Whether another head names the same representation: same strong ETag when both have
  /// one, else the same `Last-Modified`; false when neither can tell.
  /// - Parameter other: the newer record.
  /// - Returns: true when the partial bytes still belong to it.
  package func sameRepresentation(as other: DownloadRecord) -> Bool {
    if let mine = etag, let theirs = other.etag {
      return DownloadResume.isStrong(etag: mine) && mine == theirs
    }
    if let mine = lastModified, let theirs = other.lastModified { return mine == theirs }
    return false
  }
}

/// The pure rules of a download that resumes (decision 2501).
package enum DownloadResume {
  /// Whether an entity tag is strong (`"x"`, not `W/"x"`): only a strong one may go in
  /// `If-Range` (RFC 9110 §13.1.5).
  /// - Parameter etag: the tag as sent.
  /// - Returns: true for a strong tag.
  package static func isStrong(etag: String) -> Bool {
    let trimmed = etag.trimmingSpacesAndTabs()
    return trimmed.hasPrefix("\"") && trimmed.hasSuffix("\"") && trimmed.count >= 2
  }

  /// The `If-Range` value for a record: its strong ETag, else its `Last-Modified` date; nil
  /// when it has neither (a weak ETag alone cannot resume: the download starts again).
  /// - Parameter record: the sidecar.
  /// - Returns: the value, or nil.
  package static func ifRange(for record: DownloadRecord) -> String? {
    if let etag = record.etag, isStrong(etag: etag) { return etag }
    return record.lastModified
  }

  /// The SHA-256 in a `Repr-Digest` field (RFC 9530): the `sha-256` member of the
  /// structured-field dictionary, a byte sequence `:BASE64:`, parameters ignored.
  /// - Parameter value: the field's value.
  /// - Returns: the 32 bytes; nil when there is no such member or it is malformed.
  package static func sha256(reprDigest value: String) -> [UInt8]? {
    for member in value.split(separator: ",") {
      let parts = member.split(separator: "=", maxSplits: 1)
      guard parts.count == 2 else { continue }
      let key = String(parts[0]).trimmingSpacesAndTabs()
      guard key == "sha-256" else { continue }
      var item = String(parts[1]).trimmingSpacesAndTabs()
      if let semicolon = item.firstIndex(of: ";") { item = String(item[..<semicolon]) }
      guard item.count >= 2, item.hasPrefix(":"), item.hasSuffix(":") else { return nil }
      let base64 = String(item.dropFirst().dropLast())
      guard let bytes = Data(base64Encoded: base64), bytes.count == 32 else { return nil }
      return Array(bytes)
    }
    return nil
  }

  /// `bytes F-L/SIZE` (or `bytes F-L/*`, SIZE nil) parsed; nil when malformed or L < F.
  /// - Parameter value: a `Content-Range` value.
  /// - Returns: the first and last byte and the whole length.
  package static func contentRange(_ value: String) -> (first: Int64, last: Int64, size: Int64?)? {
    let trimmed = value.trimmingSpacesAndTabs()
    guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
    let spec = String(trimmed.dropFirst(6)).trimmingSpacesAndTabs()
    let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
    guard halves.count == 2 else { return nil }
    let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
    guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]),
      first >= 0, last >= first
    else { return nil }
    if halves[1] == "*" { return (first, last, nil) }
    guard let size = Int64(halves[1]), size > last else { return nil }
    return (first, last, size)
  }
}
