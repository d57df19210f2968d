import CourierDomain
import CourierSystem
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A file a response body is written to as it arrives instead of memory
/// (`TransportOptions.responseSink`): memory stays flat whatever the body's size, and a
/// download can continue a partial file (decision 2500).
///
/// Only a successful (2xx) reply's body goes to the file: a 200 (or another 2xx) replaces the
/// file's content from byte 0; a 206 is written from its `Content-Range`'s first byte, which
/// must be `offset` (any other is a bad reply, `invalidResponse`, and nothing is written). The
/// file is truncated there first, so bytes past it never survive. Any other status keeps its
/// (small) body in memory, so the caller can read the server's error as usual.
public struct ResponseSink: Sendable, Equatable {
  /// The file, created (0600) when missing; never renamed or removed by the transport.
  package let file: URL
  /// Where a 206's body is expected to start: the partial file's length.
  package let offset: Int64
  /// Follows the bytes as they are written, when the caller wants their SHA-256: the
  /// transport calls `begin(at:)` where the body starts and `append(_:)` after each write.
  package var digest: ReceivedDigest?

  /// Names the file a successful reply's body is written to.
  /// - Parameters:
  ///   - file: the file, created when missing.
  ///   - offset: the byte a 206 reply must start at (the length already there); 0 by default.
  public init(file: URL, offset: Int64 = 0) {
    self.file = file
    self.offset = max(0, offset)
  }

  /// Names the file, and a digest that follows the bytes as they are written.
  /// - Parameters:
  ///   - file: the file, created when missing.
  ///   - offset: the byte a 206 reply must start at.
  ///   - digest: told where the body starts and fed each written piece.
  package init(file: URL, offset: Int64, digest: ReceivedDigest?) {
    self.init(file: file, offset: offset)
    self.digest = digest
  }

  /// Where a reply's body goes, decided from its head once the head is complete.
  /// - Parameters:
  ///   - response: the final head.
  ///   - context: the request's summary, for errors.
  /// - Returns: the byte the body is written from; nil to keep the body in memory.
  /// - Throws: `invalidResponse` (`reply_content_range_mismatch`) for a 206 whose
  ///   `Content-Range` does not start at `offset`.
  package func placement(
    for response: HTTPResponse, context: String?
  ) throws(CourierError) -> Int64? {
    guard response.status.kind == .successful else { return nil }
    guard response.status.code == 206 else { return 0 }
    let range = response.headerFields[.contentRange]
    guard let range, let first = DownloadResume.contentRange(range)?.first, first == offset else {
      throw CourierError(
        .invalidResponse, code: "reply_content_range_mismatch", mayHaveReachedServer: true,
        underlying:
          "a 206 reply's Content-Range “\(LogText.escaped(String((range ?? "none").prefix(64))))”"
          + " does not start at byte \(offset)",
        context: context)
    }
    return first
  }
}
