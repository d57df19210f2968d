/// The mapping from libcurl's `CURLcode` numbers to the domain's kinds, for the libcurl
/// transport. Numbers rather than the C enum, so the domain imports no C library; the numbers are
/// stable in libcurl's ABI (curl.h keeps retired codes as `CURLE_OBSOLETEnn`).
///
/// Unlike URLSession on Linux, which folds most of these into −1, libcurl says precisely what
/// failed, so no message text is parsed here.
package enum CurlErrorTable {
  /// `CURLcode` values this table names (libcurl 7.88, curl.h).
  package enum Code {
    /// CURLE_UNSUPPORTED_PROTOCOL.
    package static let unsupportedProtocol = 1
    /// CURLE_FAILED_INIT.
    package static let failedInit = 2
    /// CURLE_URL_MALFORMAT.
    package static let urlMalformat = 3
    /// CURLE_COULDNT_RESOLVE_PROXY.
    package static let couldntResolveProxy = 5
    /// CURLE_COULDNT_RESOLVE_HOST.
    package static let couldntResolveHost = 6
    /// CURLE_COULDNT_CONNECT.
    package static let couldntConnect = 7
    /// CURLE_WEIRD_SERVER_REPLY.
    package static let weirdServerReply = 8
    /// CURLE_HTTP2: a problem in the HTTP/2 framing layer.
    package static let http2 = 16
    /// CURLE_PARTIAL_FILE: the body ended before its announced length.
    package static let partialFile = 18
    /// CURLE_WRITE_ERROR: the transport's own write callback refused the body.
    package static let writeError = 23
    /// CURLE_UPLOAD_FAILED.
    package static let uploadFailed = 25
    /// CURLE_READ_ERROR: the body's source could not be read.
    package static let readError = 26
    /// CURLE_OUT_OF_MEMORY.
    package static let outOfMemory = 27
    /// CURLE_OPERATION_TIMEDOUT.
    package static let operationTimedOut = 28
    /// CURLE_SSL_CONNECT_ERROR.
    package static let sslConnectError = 35
    /// CURLE_ABORTED_BY_CALLBACK.
    package static let abortedByCallback = 42
    /// CURLE_BAD_FUNCTION_ARGUMENT.
    package static let badFunctionArgument = 43
    /// CURLE_INTERFACE_FAILED.
    package static let interfaceFailed = 45
    /// CURLE_TOO_MANY_REDIRECTS.
    package static let tooManyRedirects = 47
    /// CURLE_GOT_NOTHING: the server closed without a byte of response.
    package static let gotNothing = 52
    /// CURLE_SSL_ENGINE_NOTFOUND.
    package static let sslEngineNotFound = 53
    /// CURLE_SSL_ENGINE_SETFAILED.
    package static let sslEngineSetFailed = 54
    /// CURLE_SEND_ERROR.
    package static let sendError = 55
    /// CURLE_RECV_ERROR.
    package static let recvError = 56
    /// CURLE_SSL_CERTPROBLEM.
    package static let sslCertProblem = 58
    /// CURLE_SSL_CIPHER.
    package static let sslCipher = 59
    /// CURLE_PEER_FAILED_VERIFICATION.
    package static let peerFailedVerification = 60
    /// CURLE_BAD_CONTENT_ENCODING.
    package static let badContentEncoding = 61
    /// CURLE_FILESIZE_EXCEEDED.
    package static let filesizeExceeded = 63
    /// CURLE_USE_SSL_FAILED.
    package static let useSSLFailed = 64
    /// CURLE_SEND_FAIL_REWIND: the body had to be sent again and could not be rewound.
    package static let sendFailRewind = 65
    /// CURLE_SSL_ENGINE_INITFAILED.
    package static let sslEngineInitFailed = 66
    /// CURLE_SSL_CACERT_BADFILE.
    package static let sslCACertBadFile = 77
    /// CURLE_SSL_SHUTDOWN_FAILED.
    package static let sslShutdownFailed = 80
    /// CURLE_SSL_CRL_BADFILE.
    package static let sslCRLBadFile = 82
    /// CURLE_SSL_ISSUER_ERROR.
    package static let sslIssuerError = 83
    /// CURLE_SSL_PINNEDPUBKEYNOTMATCH.
    package static let sslPinnedPubKeyNotMatch = 90
    /// CURLE_SSL_INVALIDCERTSTATUS.
    package static let sslInvalidCertStatus = 91
    /// CURLE_HTTP2_STREAM.
    package static let http2Stream = 92
    /// CURLE_HTTP3.
    package static let http3 = 95
    /// CURLE_QUIC_CONNECT_ERROR.
    package static let quicConnectError = 96
    /// CURLE_PROXY: the proxy handshake failed.
    package static let proxy = 97
    /// CURLE_SSL_CLIENTCERT.
    package static let sslClientCert = 98
    /// CURLE_UNRECOVERABLE_POLL.
    package static let unrecoverablePoll = 99
  }

  /// Classifies a `CURLcode`.
  /// - Parameters:
  ///   - code: the `CURLcode` number (not 0, which is success).
  ///   - offline: whether the path monitor says the path is down: "could not connect" or
  ///     "could not resolve" then means offline.
  ///   - requestSent: whether any byte of the request was written to a connection; when none
  ///     was, the server cannot have processed it whatever the code.
  /// - Returns: the kind and whether the request may have been processed.
  package static func classify(curlCode code: Int, offline: Bool, requestSent: Bool = true)
    -> TransportErrorTable.Outcome
  {
    var outcome = row(code, offline: offline)
    if !requestSent { outcome.mayHaveReachedServer = false }
    return outcome
  }

  /// The code of a TLS failure a person can act on (`TLSFailureCode`), or nil.
  /// - Parameters:
  ///   - code: the `CURLcode` number.
  ///   - detail: libcurl's error text (its error buffer).
  /// - Returns: the code.
  package static func tlsCode(curlCode code: Int, detail: String) -> String? {
    switch code {
    case Code.sslPinnedPubKeyNotMatch: return TLSFailureCode.pinMismatch
    case Code.peerFailedVerification, Code.sslIssuerError, Code.sslInvalidCertStatus:
      return TLSFailureCode.untrusted
    case Code.sslCertProblem, Code.sslClientCert: return TLSFailureCode.clientCertificate
    case Code.sslCACertBadFile: return TLSFailureCode.caBundle
    default:
      return isCertificateAlert(curlCode: code, detail: detail)
        ? TLSFailureCode.clientCertificate : nil
    }
  }

  /// Whether a failure is the server's TLS alert refusing the client's certificate (none
  /// given, not trusted, unusable). Under TLS 1.3 the client's handshake is over before the
  /// server has checked its certificate, so OpenSSL reports the server's alert when the reply
  /// is read, as a receive error: only its text ("tlsv13 alert certificate required",
  /// "tlsv1 alert unknown ca", "sslv3 alert bad certificate") tells it from a lost
  /// connection. The server processed nothing: the exchange never began.
  /// - Parameters:
  ///   - code: the `CURLcode` number.
  ///   - detail: libcurl's error text.
  /// - Returns: true for such an alert.
  package static func isCertificateAlert(curlCode code: Int, detail: String) -> Bool {
    guard [Code.recvError, Code.sendError, Code.sslConnectError].contains(code) else {
      return false
    }
    let text = detail.lowercased()
    guard text.contains("alert") else { return false }
    return text.contains("certificate") || text.contains("unknown ca")
  }

  static func row(_ code: Int, offline: Bool) -> TransportErrorTable.Outcome {
    typealias Outcome = TransportErrorTable.Outcome
    switch code {
    case Code.couldntResolveHost, Code.couldntResolveProxy:
      return Outcome(offline ? .offline : .dns)
    case Code.couldntConnect, Code.interfaceFailed, Code.proxy, Code.quicConnectError:
      return Outcome(offline ? .offline : .cannotReachHost)
    case Code.operationTimedOut:
      return Outcome(.timedOut, mayHaveReachedServer: true)
    case Code.sslConnectError, Code.sslEngineNotFound, Code.sslEngineSetFailed,
      Code.sslCertProblem, Code.sslCipher, Code.peerFailedVerification, Code.useSSLFailed,
      Code.sslEngineInitFailed, Code.sslCACertBadFile, Code.sslShutdownFailed,
      Code.sslCRLBadFile, Code.sslIssuerError, Code.sslPinnedPubKeyNotMatch,
      Code.sslInvalidCertStatus, Code.sslClientCert:
      return Outcome(.tls)
    case Code.sendError, Code.recvError, Code.gotNothing, Code.http2, Code.http2Stream,
      Code.http3, Code.uploadFailed, Code.sendFailRewind:
      return Outcome(.connectionLost, mayHaveReachedServer: true)
    case Code.partialFile:
      // The connection closed cleanly before the body's length or its last chunk: the server
      // answered, and its reply is cut short (a reset mid-body is RECV_ERROR, a lost connection).
      return .truncatedReply
    case Code.weirdServerReply, Code.badContentEncoding, Code.tooManyRedirects,
      Code.filesizeExceeded, Code.writeError, Code.unsupportedProtocol:
      // A write error comes from the transport's own bound on the response's size. An
      // unsupported protocol, once the URL's scheme was checked before sending, is a reply
      // that isn't HTTP at all (libcurl reads it as a refused HTTP/0.9 answer).
      return Outcome(.invalidResponse, mayHaveReachedServer: true)
    case Code.abortedByCallback:
      return Outcome(.cancelled)
    case Code.readError:
      return Outcome(.fileUnavailable)
    case Code.urlMalformat, Code.badFunctionArgument:
      return Outcome(.invalidInput)
    case Code.failedInit, Code.outOfMemory, Code.unrecoverablePoll:
      // Local trouble, not the network's: transient, and nothing was necessarily sent.
      return Outcome(.connectionLost)
    default:
      return Outcome(offline ? .offline : .connectionLost, mayHaveReachedServer: !offline)
    }
  }
}
