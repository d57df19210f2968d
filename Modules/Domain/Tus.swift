import CourierSystem
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The tus 1.0.0 resumable upload protocol's pure parts (decision 1301): what a server offers,
/// how metadata is written, and what to do with each answer to a creation, a `HEAD` or a
/// `PATCH`. A delivery counts only when the server's own answer proves it: the final offset
/// equals the length (and, where asked, the stored record's id is named).
///
/// Pure: every rule is a table test (`TusTests`).
package enum Tus {
  /// The protocol version sent in `Tus-Resumable`.
  package static let version = "1.0.0"
  /// The media type of a `PATCH` body.
  package static let offsetContentType = "application/offset+octet-stream"

  /// What a server offers, read from its `OPTIONS` answer.
  package struct Capabilities: Sendable, Equatable {
    /// `Tus-Extension`, lower-cased.
    package var extensions: Set<String>
    /// `Tus-Checksum-Algorithm`, lower-cased, in the server's order.
    package var checksumAlgorithms: [String]
    /// `Tus-Max-Size`, when given.
    package var maxSize: Int64?

    /// What is assumed of a server that did not answer `OPTIONS`: core and creation only.
    package static let assumed = Capabilities(extensions: ["creation"])

    /// Creates capabilities.
    /// - Parameters:
    ///   - extensions: the extensions.
    ///   - checksumAlgorithms: the checksum algorithms.
    ///   - maxSize: the largest upload.
    package init(extensions: Set<String>, checksumAlgorithms: [String] = [], maxSize: Int64? = nil)
    {
      self.extensions = extensions
      self.checksumAlgorithms = checksumAlgorithms
      self.maxSize = maxSize
    }

    /// Reads an `OPTIONS` answer; a non-2xx answer or one without `Tus-Version` is a server
    /// that says nothing, so ``assumed`` holds.
    /// - Parameter response: the answer.
    /// - Returns: the capabilities.
    package init(options response: HTTPResponse) {
      let fields = response.headerFields
      guard response.status.kind == .successful, fields[.tusVersion] != nil else {
        self = .assumed
        return
      }
      let list = { (name: HTTPField.Name) -> [String] in
        (fields[name] ?? "").split(separator: ",").map {
          $0.trimmingSpacesAndTabs().lowercased()
        }.filter { !$0.isEmpty }
      }
      extensions = Set(list(.tusExtension))
      checksumAlgorithms = list(.tusChecksumAlgorithm)
      maxSize = fields[.tusMaxSize].flatMap { Int64($0) }
    }

    /// The checksum algorithm the client uses: `sha256` when the server offers the checksum
    /// extension with it, else none (the only one Courier computes).
    package var checksumAlgorithm: String? {
      extensions.contains("checksum") && checksumAlgorithms.contains("sha256") ? "sha256" : nil
    }

    /// Whether the first chunk may go with the creation.
    package var createsWithUpload: Bool { extensions.contains("creation-with-upload") }
  }

  /// What the answer to `OPTIONS` on the creation URL means for an upload (decision 1303).
  package enum Discovery: Sendable, Equatable {
    /// Go on with what the server offers (``Capabilities/assumed`` when it said nothing).
    case offers(Capabilities)
    /// Stop this attempt with this error: the retry policy retries a transient one (a 503, a
    /// 5xx) and gives up on the others (a page that is not the server's, another version).
    case fail(CourierError)
  }

  /// Decides on the answer to `OPTIONS` (decision 1303). tus servers must answer a successful
  /// `OPTIONS` with `Tus-Version`, so:
  /// - a 2xx listing `1.0.0` offers what it lists; listing only other versions is
  ///   `tus_version_unsupported` (`business`, as the 412 of the creation would be);
  /// - a 2xx without `Tus-Version` but with a body is a page (a captive portal's login, a
  ///   proxy's, a web server's) and not the server: `notTheServer` (`tus_options_not_tus`),
  ///   before any byte of the file goes to it; one without a body is a layer in front (a
  ///   CORS handler) that answered for the server: ``Capabilities/assumed``;
  /// - a redirect the transport did not follow, 407 and 511 are `notTheServer`
  ///   (`ResponseClassifier`);
  /// - 408, 429 and 5xx are transient: the attempt fails and the policy retries it;
  /// - any other 4xx (404, 405 and 501 for a server without `OPTIONS`, 401 for one that wants
  ///   a login even there) says nothing about tus: ``Capabilities/assumed``, and the
  ///   creation's own answer is classified.
  /// - Parameters:
  ///   - response: the answer.
  ///   - body: its body.
  /// - Returns: what to do.
  package static func afterOptions(_ response: HTTPResponse, body: Data) -> Discovery {
    let status = response.status.code
    if (200..<300).contains(status) {
      if response.headerFields[.tusVersion] != nil {
        guard speaks(response) else {
          return .fail(
            CourierError(
              .business, status: status, code: "tus_version_unsupported",
              serverMessage: "The server does not speak the tus version \(version)."))
        }
        return .offers(Capabilities(options: response))
      }
      guard body.isEmpty else {
        return .fail(
          CourierError(
            .notTheServer, status: status, code: "tus_options_not_tus",
            serverMessage: "The upload address answered with a page instead of the upload "
              + "server (a network login page?); nothing was sent.",
            underlying: "OPTIONS 2xx without Tus-Version"))
      }
      return .offers(.assumed)
    }
    let elsewhere = (300..<400).contains(status) || status == 407 || status == 511
    let transient = status == 408 || status == 429 || (status >= 500 && status != 501)
    if elsewhere || transient, let error = ResponseClassifier.classify(response, body: body) {
      return .fail(error)
    }
    return .offers(.assumed)
  }

  /// Whether an `OPTIONS` answer comes from a tus 1.0.0 server: a 2xx whose `Tus-Version`
  /// lists `1.0.0` (a queued upload to a target that does not goes as multipart).
  /// - Parameter response: the answer.
  /// - Returns: true for a tus server.
  package static func speaks(_ response: HTTPResponse) -> Bool {
    guard response.status.kind == .successful, let versions = response.headerFields[.tusVersion]
    else { return false }
    return versions.split(separator: ",").contains {
      $0.trimmingSpacesAndTabs() == version
    }
  }

  /// What the client does next.
  package enum Step: Sendable, Equatable {
    /// Send the bytes from this offset (the server holds everything before it).
    case send(from: Int64)
    /// The server has every byte; the proof is in the answer (the stored record's id when the
    /// server names one).
    case complete(recordID: String?)
    /// Resend the chunk just sent: the server discarded it (checksum mismatch).
    case resendChunk
    /// Ask the server (`HEAD`) where the upload stands before sending more.
    case resync
    /// The upload is gone or unknown (404, 410): create a new one, from byte 0.
    case restart
    /// Stop with this error (transient ones are retried by the caller's retry policy, which
    /// resumes with a `HEAD`).
    case fail(CourierError)
  }

  /// `Upload-Metadata`: `key base64(value)` pairs separated by commas, in the given order.
  /// - Parameter pairs: keys (without spaces or commas) and values.
  /// - Returns: the header value.
  package static func metadata(_ pairs: [(key: String, value: String)]) -> String {
    pairs.map { pair in
      pair.value.isEmpty
        ? pair.key : "\(pair.key) \(Data(pair.value.utf8).base64EncodedString())"
    }.joined(separator: ",")
  }

  /// Decides on the answer to a creation (`POST`).
  /// - Parameters:
  ///   - response: the answer.
  ///   - body: its body (a refusal's error body).
  ///   - length: the upload's length.
  ///   - sentBody: the bytes sent with the creation (creation-with-upload), 0 for none.
  ///   - confirmation: what proves completion.
  /// - Returns: `send(from:)` (the upload URL is the answer's `Location`), `complete`,
  ///   `resync` (the offset is not given: ask), or `fail`.
  package static func afterCreation(
    _ response: HTTPResponse, body: Data, length: Int64, sentBody: Int64,
    confirmation: DeliveryProof.UploadConfirmation
  ) -> Step {
    switch response.status.code {
    case 201, 460:
      guard let location = response.headerFields[.location], !location.isEmpty else {
        return .fail(anomaly("tus_location_missing", response, "gave no upload address"))
      }
      _ = location
      if response.status.code == 460 { return .send(from: 0) }
      guard let text = response.headerFields[.uploadOffset] else {
        return sentBody == 0 ? .send(from: 0) : .resync
      }
      guard let offset = Int64(text), offset >= 0 else {
        return .fail(anomaly("tus_offset_invalid", response, "gave an unreadable offset"))
      }
      if offset > sentBody || offset > length {
        return .fail(anomaly("tus_offset_beyond", response, "claims bytes that were never sent"))
      }
      return offset == length
        ? completion(response, confirmation: confirmation) : .send(from: offset)
    default:
      return refusal(response, body: body, restartable: false)
    }
  }

  /// Decides on the answer to a `HEAD` of the upload.
  /// - Parameters:
  ///   - response: the answer.
  ///   - body: its body (a refusal's error body).
  ///   - length: the upload's length.
  ///   - confirmed: the offset the server confirmed before (0 when unknown).
  ///   - confirmation: what proves completion.
  /// - Returns: `send(from:)`, `complete`, `restart` (404, 410) or `fail`.
  package static func afterHead(
    _ response: HTTPResponse, body: Data, length: Int64, confirmed: Int64,
    confirmation: DeliveryProof.UploadConfirmation
  ) -> Step {
    guard response.status.code == 200 || response.status.code == 204 else {
      return refusal(response, body: body, restartable: true)
    }
    if let text = response.headerFields[.uploadLength], Int64(text) != length {
      return .fail(anomaly("tus_length_mismatch", response, "describes an upload of another size"))
    }
    guard let text = response.headerFields[.uploadOffset] else {
      return .fail(anomaly("tus_offset_missing", response, "did not say how much it has"))
    }
    guard let offset = Int64(text), offset >= 0 else {
      return .fail(anomaly("tus_offset_invalid", response, "gave an unreadable offset"))
    }
    if offset > length {
      return .fail(anomaly("tus_offset_beyond", response, "claims more bytes than the file has"))
    }
    if offset < confirmed {
      return .fail(anomaly("tus_offset_behind", response, "lost bytes it had confirmed"))
    }
    return offset == length
      ? completion(response, confirmation: confirmation) : .send(from: offset)
  }

  /// Decides on the answer to a `PATCH` that sent `chunk` bytes from `from`.
  /// - Parameters:
  ///   - response: the answer.
  ///   - body: its body (the error body of a 409 or a refusal).
  ///   - from: the `Upload-Offset` sent.
  ///   - chunk: the body's length.
  ///   - length: the upload's length.
  ///   - resends: how often this chunk was already sent again after a checksum mismatch.
  ///   - confirmation: what proves completion.
  /// - Returns: the next step.
  package static func afterPatch(
    _ response: HTTPResponse, body: Data, from: Int64, chunk: Int64, length: Int64,
    resends: Int, confirmation: DeliveryProof.UploadConfirmation
  ) -> Step {
    switch response.status.code {
    case 204, 200:
      guard let text = response.headerFields[.uploadOffset] else {
        return .fail(anomaly("tus_offset_missing", response, "did not say how much it has"))
      }
      guard let offset = Int64(text), offset >= 0 else {
        return .fail(anomaly("tus_offset_invalid", response, "gave an unreadable offset"))
      }
      if offset > from + chunk || offset > length {
        return .fail(anomaly("tus_offset_beyond", response, "claims bytes that were never sent"))
      }
      if offset < from {
        return .fail(anomaly("tus_offset_behind", response, "lost bytes it had confirmed"))
      }
      return offset == length
        ? completion(response, confirmation: confirmation) : .send(from: offset)
    case 460:
      guard resends < 1 else {
        var error = anomaly(
          "checksum_mismatch", response, "received the file damaged twice in a row")
        error.kind = .connectionLost
        return .fail(error)
      }
      return .resendChunk
    case 409:
      let code = ServerProblem.decode(body, contentType: response.headerFields[.contentType]).code
      // Another offset than ours (a PATCH cut short stored part of its body) or a newer PATCH
      // took over: the server says where it stands, on a HEAD.
      if code == nil || code == "offset_mismatch" || code == "upload_superseded" { return .resync }
      return refusal(response, body: body, restartable: true)
    default:
      return refusal(response, body: body, restartable: true)
    }
  }

  /// The exchange whose answer gave a step.
  package enum Exchange: Sendable, Equatable {
    /// The creation (`POST`), with or without a first chunk.
    case creation
    /// A `HEAD` asking where the upload stands.
    case head
    /// A `PATCH` that sent bytes.
    case patch
  }

  /// The confirmed offset after a step (what a later `HEAD` must be at least, see
  /// ``afterHead(_:body:length:confirmed:confirmation:)``). A creation's or a `PATCH`'s answer
  /// confirms its `send(from:)` offset: ``afterCreation(_:body:length:sentBody:confirmation:)`` and
  /// ``afterPatch(_:body:from:chunk:length:resends:confirmation:)`` refuse one past the bytes sent.
  /// A `HEAD`'s offset is a claim, bounded only by the length (a process before this one may
  /// have sent more than this one knows), so it says where to send from and confirms nothing:
  /// taken as confirmed, one byte too many (refused by the server's 409 on the next `PATCH`)
  /// would make the true `HEAD` that follows look like lost bytes, and, once saved in the
  /// resume record, every later run too.
  /// - Parameters:
  ///   - step: the step decided on the answer.
  ///   - exchange: the exchange that was answered.
  ///   - confirmed: the confirmed offset before the answer.
  /// - Returns: the confirmed offset after it.
  package static func confirmedOffset(after step: Step, of exchange: Exchange, confirmed: Int64)
    -> Int64
  {
    guard case .send(let from) = step, exchange != .head else { return confirmed }
    return from
  }

  /// The completion proof: the offset equals the length, and the record's id when the target
  /// must name one (the reference backend's `Courier-Photo-Id`).
  static func completion(_ response: HTTPResponse, confirmation: DeliveryProof.UploadConfirmation)
    -> Step
  {
    let id = response.headerFields[.courierPhotoID].flatMap { $0.isEmpty ? nil : $0 }
    if confirmation == .record && id == nil {
      return .fail(
        CourierError(
          .notTheServer, status: response.status.code,
          code: DeliveryProof.Shortfall.notUploadRecord.rawValue,
          underlying: "complete without \(HTTPField.Name.courierPhotoID)"))
    }
    return .complete(recordID: id)
  }

  /// A refusal: 404 and 410 restart (where allowed), 412 is a version the server does not
  /// speak, anything else is classified as every response is.
  static func refusal(_ response: HTTPResponse, body: Data, restartable: Bool) -> Step {
    let status = response.status.code
    if restartable && (status == 404 || status == 410) { return .restart }
    var error =
      ResponseClassifier.classify(response, body: body)
      ?? CourierError(.invalidResponse, status: status, code: "tus_unexpected_status")
    if status == 412 {
      error.kind = .business
      error.code = "tus_version_unsupported"
      error.serverMessage =
        error.serverMessage ?? "The server does not speak the tus version \(version)."
    }
    return .fail(error)
  }

  /// The error for an answer the client cannot build on without risking a damaged file (an
  /// impossible offset): `invalidResponse`, with a sentence saying the upload was stopped.
  /// - Parameters:
  ///   - code: the machine-readable code (`tus_offset_beyond`...).
  ///   - response: the answer.
  ///   - what: what the server did, after "The upload server".
  /// - Returns: the error.
  package static func anomaly(_ code: String, _ response: HTTPResponse, _ what: String)
    -> CourierError
  {
    CourierError(
      .invalidResponse, status: response.status.code, code: code,
      serverMessage: "The upload server \(what); the upload was stopped so that no damaged "
        + "file is stored. Run it again to resume from what the server confirms.")
  }
}
