import CourierSystem
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The IETF's resumable uploads draft (draft-ietf-httpbis-resumable-upload, interop versions 3
/// to 8, decisions 2702 and 2707; what each version changes is ``IETFInterop``'s) as far as a
/// client decides on answers: which fields a request carries, what a
/// `104 (Upload Resumption Supported)` says, and the next step after each answer. The
/// exchanges themselves are `DraftStrategy`'s.
///
/// The representation uploaded is the target's own (`multipart/form-data` for `/photos`), so
/// the same bytes are a plain upload to a server that does not speak the draft.
package enum IETFUpload {
  /// The media type of an append (`PATCH`).
  package static let partialUploadType = "application/partial-upload"
  /// The draft's problem type for an append at another offset than the server's (RFC 9457).
  package static let mismatchingOffsetType =
    "https://iana.org/assignments/http-problem-types#mismatching-upload-offset"

  /// The fields a creation adds to the plain request.
  /// - Parameters:
  ///   - complete: whether the content is the whole representation (`Upload-Complete: ?1`).
  ///   - length: the whole representation's length, when the content is only its start.
  ///   - digest: the whole representation's SHA-256, for `Repr-Digest`; nil for none.
  ///   - interop: the version spoken.
  /// - Returns: the fields.
  package static func creationFields(
    complete: Bool, length: Int64?, digest: [UInt8]?, interop: IETFInterop = .current
  ) -> HTTPFields {
    var fields: HTTPFields = [.uploadDraftInteropVersion: interop.description]
    fields.append(interop.completeness(complete))
    if let length { fields[.uploadLength] = String(length) }
    if let digest { fields[.reprDigest] = "sha-256=:\(Data(digest).base64EncodedString()):" }
    return fields
  }

  /// What a `104` says: the upload resource (resolved against `target`) and, in a progress
  /// `104`, the offset the server stored. A `104` without the interop version the request
  /// named is ignored, as the draft requires; so is any other interim status.
  /// - Parameters:
  ///   - interim: the informational response.
  ///   - target: the request's URL, for a relative `Location`.
  ///   - interop: the version the request named.
  /// - Returns: the address and the offset, each when given; nil to ignore the answer.
  package static func resumption(
    _ interim: HTTPResponse, target: URL, interop: IETFInterop = .current
  ) -> (location: URL?, offset: Int64?)? {
    guard interim.status.code == 104,
      integer(interim.headerFields[.uploadDraftInteropVersion]) == Int64(interop.number)
    else { return nil }
    let location = interim.headerFields[.location].flatMap {
      URL(string: $0, relativeTo: target)?.absoluteURL
    }
    return (location, integer(interim.headerFields[.uploadOffset]))
  }

  /// Whether an `OPTIONS` answer of the target says it takes the draft's appends
  /// (`Accept-Patch: application/partial-upload`, required from interop 8).
  /// - Parameter response: the answer.
  /// - Returns: true when offered.
  package static func offers(_ response: HTTPResponse) -> Bool {
    guard response.status.kind == .successful, let accepted = response.headerFields[.acceptPatch]
    else { return false }
    return accepted.split(separator: ",").contains {
      $0.split(separator: ";").first?.trimmingSpacesAndTabs().lowercased()
        == partialUploadType
    }
  }

  /// The server's limits from `Upload-Limit` (an sf-dictionary of integers).
  package struct Limits: Sendable, Equatable {
    /// `max-size`: the largest upload.
    package var maxSize: Int64?
    /// `max-append-size`: the largest content of one request.
    package var maxAppendSize: Int64?

    /// Reads the field; unknown members and values that are not integers are skipped.
    /// - Parameter field: the field's value, if any.
    package init(_ field: String?) {
      for member in (field ?? "").split(separator: ",") {
        let pair = member.split(separator: "=", maxSplits: 1).map {
          $0.trimmingSpacesAndTabs()
        }
        guard pair.count == 2, let value = IETFUpload.integer(pair[1]) else { continue }
        switch pair[0] {
        case "max-size": maxSize = value
        case "max-append-size": maxAppendSize = value
        default: break
        }
      }
    }
  }

  /// An sf-integer that is not negative (at most 15 digits); nil otherwise.
  /// - Parameter text: the field value.
  /// - Returns: the value.
  package static func integer(_ text: String?) -> Int64? {
    guard let text = text?.trimmingSpacesAndTabs(), !text.isEmpty, text.count <= 15,
      text.allSatisfy({ $0.isASCII && $0.isNumber })
    else { return nil }
    return Int64(text)
  }

  /// Whether a refusal carries the draft's `mismatching-upload-offset` problem type.
  /// - Parameters:
  ///   - response: the answer.
  ///   - body: its body.
  /// - Returns: true for that problem type.
  package static func isOffsetMismatch(_ response: HTTPResponse, body: Data) -> Bool {
    guard response.status.code == 409, case .object(let members)? = try? JSONValue(parsing: body),
      case .string(let type)? = members["type"]
    else { return false }
    return type == mismatchingOffsetType
  }

  /// Decides on the answer to a `HEAD` of the upload resource.
  /// - Parameters:
  ///   - response: the answer.
  ///   - body: its body (empty for a `HEAD`).
  ///   - length: the representation's length.
  ///   - confirmation: what proves completion.
  ///   - interop: the version the `HEAD` named (its completeness field).
  /// - Returns: `send(from:)`, `complete` (the server names the record it became),
  ///   `restart` (404, 410: gone) or `fail`.
  package static func afterHead(
    _ response: HTTPResponse, body: Data, length: Int64,
    confirmation: DeliveryProof.UploadConfirmation, interop: IETFInterop = .current
  ) -> Tus.Step {
    guard response.status.code == 204 || response.status.code == 200 else {
      return Tus.refusal(response, body: body, restartable: true)
    }
    guard let offset = integer(response.headerFields[.uploadOffset]) else {
      return .fail(Tus.anomaly("ietf_offset_missing", response, "did not say how much it has"))
    }
    if offset > length {
      return .fail(Tus.anomaly("ietf_offset_beyond", response, "claims more bytes than were sent"))
    }
    if interop.isComplete(response) == true {
      return offset == length
        ? Tus.completion(response, confirmation: confirmation)
        : .fail(Tus.anomaly("ietf_length_mismatch", response, "completed another upload"))
    }
    return .send(from: offset)
  }

  /// Decides on the final answer to a creation or an append that sent bytes up to `end`
  /// (a completing request when `end` is the length).
  /// - Parameters:
  ///   - response: the answer.
  ///   - body: its body.
  ///   - end: the offset the request's content ended at.
  ///   - length: the representation's length.
  /// - Returns: `complete(recordID: nil)` when a completing request succeeded (the caller
  ///   checks the target's proof in the body), `send(from:)` after an incomplete one,
  ///   `resync` (a 409 mismatch, or a 413: ask the offset, then send smaller pieces),
  ///   `restart` (404, 410) or `fail`.
  package static func afterWrite(_ response: HTTPResponse, body: Data, end: Int64, length: Int64)
    -> Tus.Step
  {
    let status = response.status.code
    if (200..<300).contains(status) {
      if end == length { return .complete(recordID: nil) }
      guard let offset = integer(response.headerFields[.uploadOffset]) else { return .resync }
      if offset > end {
        return .fail(Tus.anomaly("ietf_offset_beyond", response, "claims bytes never sent"))
      }
      return .send(from: offset)
    }
    if isOffsetMismatch(response, body: body) || status == 413 { return .resync }
    return Tus.refusal(response, body: body, restartable: true)
  }
}
