import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How a refused interop version is told and answered (decision 2708): the client retries the
/// creation once at the highest version both sides speak, or stops with a sentence that names
/// the versions.
extension IETFInterop {
  /// The problem type of a refused version (RFC 9457): the reference backend's, whose body
  /// lists what it takes in `supported`.
  package static let refusedType = "urn:courier:problem:unsupported-interop-version"

  /// Whether an answer to a request sent at `sent` refuses that version, and which versions
  /// the server says it takes: a problem of ``refusedType`` (its `supported` list), or a
  /// `400` whose own `Upload-Draft-Interop-Version` names another version (SwiftNIO's
  /// `NIOResumableUpload` answers so).
  /// - Parameters:
  ///   - response: the answer.
  ///   - body: its body.
  ///   - sent: the version the request named.
  /// - Returns: nil when the version is not what was refused; otherwise the versions the
  ///   server names (empty when it names none).
  package static func refusal(_ response: HTTPResponse, body: Data, sent: IETFInterop) -> [Int]? {
    guard (400..<500).contains(response.status.code) else { return nil }
    if case .object(let members)? = try? JSONValue(parsing: body),
      members["type"]?.stringValue == refusedType
    {
      guard case .array(let items)? = members["supported"] else { return [] }
      return items.compactMap(\.intValue).sorted()
    }
    if response.status.code == 400,
      let named = IETFUpload.integer(response.headerFields[.uploadDraftInteropVersion]),
      named != Int64(sent.number)
    {
      return [Int(named)]
    }
    return nil
  }

  /// The version to retry a refused creation with: the highest both speak, when it is not the
  /// refused one.
  /// - Parameters:
  ///   - listed: the versions the server takes.
  ///   - refused: the version it refused.
  /// - Returns: the version, or nil when none is shared.
  package static func shared(_ listed: [Int], refused: IETFInterop) -> IETFInterop? {
    listed.compactMap(IETFInterop.init).filter { $0 != refused }.max()
  }

  /// The error when no version can be agreed on: a refusal (`business`, code
  /// `ietf_interop_unsupported`) whose sentence names what each side speaks.
  /// - Parameters:
  ///   - listed: the versions the server takes (may be empty).
  ///   - refused: the versions it refused, in the order sent.
  ///   - pinned: whether the version was set by the configuration (`ietf_interop_version`,
  ///     `--interop`), so no other was tried.
  ///   - status: the answer's status.
  /// - Returns: the error.
  package static func unsupported(
    _ listed: [Int], refused: [IETFInterop], pinned: Bool, status: Int
  ) -> CourierError {
    let tried = refused.map { "interop \($0)" }.joined(separator: " and then ")
    let takes =
      listed.isEmpty
      ? "it named no version it takes"
      : "it takes \(listed.count == 1 ? "interop" : "interop versions") "
        + listed.map(String.init).joined(separator: ", ")
    let ours =
      pinned
      ? "interop \(refused.last ?? current) is the one set by ietf_interop_version or --interop"
      : "Courier speaks 3 to 8"
    return CourierError(
      .business, status: status, code: "ietf_interop_unsupported",
      serverMessage: "The upload server refused \(tried) of the IETF resumable uploads draft: "
        + "\(takes), and \(ours). The upload was not sent.")
  }
}
