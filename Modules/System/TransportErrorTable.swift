/// The mapping from URLError codes, as swift-corelibs-foundation produces them on Linux, to the
/// domain's kinds. Linux never produces −1009: "offline" is inferred from the path state plus
/// the −1 / −1004 family, and −1 is told apart by libcurl's message. Kept here, as numbers and
/// text, so the domain never imports FoundationNetworking.
package enum TransportErrorTable {
  /// One row of the table's result.
  package struct Outcome: Sendable, Equatable {
    /// The error kind the failure maps to.
    package var kind: TransportFailure
    /// Whether the request may have reached the server.
    package var mayHaveReachedServer: Bool
    /// The error's code when the kind alone does not say what happened: `reply_truncated` for
    /// a reply that ended before its length (decision 2436).
    package var code: String?

    /// Creates an outcome.
    /// - Parameters:
    ///   - kind: the kind.
    ///   - mayHaveReachedServer: whether the request may have been processed.
    ///   - code: the error's code, when the kind needs one.
    package init(
      _ kind: TransportFailure, mayHaveReachedServer: Bool = false, code: String? = nil
    ) {
      self.kind = kind
      self.mayHaveReachedServer = mayHaveReachedServer
      self.code = code
    }

    /// A reply whose head came and whose body ended before its `Content-Length` or its last
    /// chunk: the server answered, and what it answered is cut short (decision 2436). A bad
    /// reply rather than a lost connection, so that the retry step does not take it for a
    /// passing fault.
    package static let truncatedReply = Outcome(
      .invalidResponse, mayHaveReachedServer: true, code: "reply_truncated")
  }

  /// Classifies a URLError code.
  /// - Parameters:
  ///   - code: the `URLError.Code` raw value.
  ///   - message: the error's description (libcurl's text on Linux), used for −1.
  ///   - offline: whether the path monitor, if one runs, says the path is down.
  /// - Returns: the kind and whether the request may have been processed.
  package static func classify(urlErrorCode code: Int, message: String, offline: Bool)
    -> Outcome
  {
    switch code {
    case -999: return Outcome(.cancelled)
    case -1001: return Outcome(.timedOut, mayHaveReachedServer: true)
    case -1003, -1006: return Outcome(offline ? .offline : .dns)
    case -1004: return Outcome(offline ? .offline : .cannotReachHost)
    case -1009, -1018, -1020: return Outcome(.offline)
    case -1005: return Outcome(.connectionLost, mayHaveReachedServer: true)
    case -1011: return Outcome(.connectionLost, mayHaveReachedServer: true)
    case -1017, -1103: return Outcome(.invalidResponse, mayHaveReachedServer: true)
    case -1002, -1000:
      // libcurl's "Received HTTP/0.9 when not allowed" (a reply that is not HTTP) arrives as
      // −1002 on Linux; a real unsupported URL never reaches a server.
      let text = message.lowercased()
      if text.contains("http/0.9") || text.contains("weird server reply") {
        return Outcome(.invalidResponse, mayHaveReachedServer: true)
      }
      return Outcome(.invalidInput)
    case -1200, -1201, -1202, -1203, -1204, -1205, -1206: return Outcome(.tls)
    case -1: return classifyUnknown(message: message, offline: offline)
    default: return Outcome(offline ? .offline : .connectionLost, mayHaveReachedServer: !offline)
    }
  }

  /// libcurl's messages behind −1, seen on Linux.
  static func classifyUnknown(message: String, offline: Bool) -> Outcome {
    let text = message.lowercased()
    if text.contains("ssl") || text.contains("tls") || text.contains("certificate") {
      return Outcome(.tls)
    }
    if text.contains("couldn't connect") || text.contains("could not connect")
      || text.contains("no route") || text.contains("network is unreachable")
    {
      return Outcome(offline ? .offline : .cannotReachHost)
    }
    if text.contains("resolve") { return Outcome(offline ? .offline : .dns) }
    if text.contains("timed out") || text.contains("timeout") {
      return Outcome(.timedOut, mayHaveReachedServer: true)
    }
    // CURLE_PARTIAL_FILE's texts: "transfer closed with 990 bytes remaining to read", "…with
    // outstanding read data remaining", and curl_easy_strerror's "Transferred a partial file".
    if text.contains("transfer closed with") || text.contains("partial file") {
      return .truncatedReply
    }
    if text.contains("transfer closed") || text.contains("reset") || text.contains("recv")
      || text.contains("send") || text.contains("empty reply")
    {
      return Outcome(.connectionLost, mayHaveReachedServer: true)
    }
    // FoundationNetworking refuses a head line it cannot read (a field name that is not a
    // token) by failing libcurl's header callback: a bad reply, as the curl adapter says.
    if text.contains("weird server reply") || text.contains("invalid")
      || text.contains("failed writing header")
    {
      return Outcome(.invalidResponse, mayHaveReachedServer: true)
    }
    return Outcome(offline ? .offline : .connectionLost, mayHaveReachedServer: !offline)
  }
}
