import CourierSystem
import Testing

@Suite("CurlErrorTable")
struct CurlErrorTableTests {
  typealias Code = CurlErrorTable.Code

  struct Row: Sendable, CustomTestStringConvertible {
    let code: Int
    let name: String
    let offline: Bool
    let kind: TransportFailure
    let reached: Bool
    var testDescription: String { "\(name) (\(code)), offline: \(offline) → \(kind)" }
  }

  static func row(
    _ code: Int, _ name: String, _ kind: TransportFailure, reached: Bool = false,
    offline: Bool = false
  ) -> Row {
    Row(code: code, name: name, offline: offline, kind: kind, reached: reached)
  }

  static let rows: [Row] = [
    row(Code.couldntResolveHost, "COULDNT_RESOLVE_HOST", .dns),
    row(Code.couldntResolveHost, "COULDNT_RESOLVE_HOST", .dns, offline: false),
    row(Code.couldntResolveHost, "COULDNT_RESOLVE_HOST", .offline, offline: true),
    row(Code.couldntResolveProxy, "COULDNT_RESOLVE_PROXY", .dns),
    row(Code.couldntConnect, "COULDNT_CONNECT", .cannotReachHost),
    row(Code.couldntConnect, "COULDNT_CONNECT", .cannotReachHost, offline: false),
    row(Code.couldntConnect, "COULDNT_CONNECT", .cannotReachHost, offline: false),
    row(Code.couldntConnect, "COULDNT_CONNECT", .offline, offline: true),
    row(Code.interfaceFailed, "INTERFACE_FAILED", .offline, offline: true),
    row(Code.proxy, "PROXY", .cannotReachHost),
    row(Code.quicConnectError, "QUIC_CONNECT_ERROR", .cannotReachHost),
    row(Code.operationTimedOut, "OPERATION_TIMEDOUT", .timedOut, reached: true),
    row(Code.operationTimedOut, "OPERATION_TIMEDOUT", .timedOut, reached: true, offline: true),
    row(Code.sslConnectError, "SSL_CONNECT_ERROR", .tls),
    row(Code.peerFailedVerification, "PEER_FAILED_VERIFICATION", .tls),
    row(Code.sslCACertBadFile, "SSL_CACERT_BADFILE", .tls),
    row(Code.sslCertProblem, "SSL_CERTPROBLEM", .tls),
    row(Code.sslCipher, "SSL_CIPHER", .tls),
    row(Code.sslIssuerError, "SSL_ISSUER_ERROR", .tls),
    row(Code.sslPinnedPubKeyNotMatch, "SSL_PINNEDPUBKEYNOTMATCH", .tls),
    row(Code.sslInvalidCertStatus, "SSL_INVALIDCERTSTATUS", .tls),
    row(Code.sslClientCert, "SSL_CLIENTCERT", .tls),
    row(Code.sslShutdownFailed, "SSL_SHUTDOWN_FAILED", .tls),
    row(Code.sslEngineNotFound, "SSL_ENGINE_NOTFOUND", .tls),
    row(Code.sslEngineSetFailed, "SSL_ENGINE_SETFAILED", .tls),
    row(Code.sslEngineInitFailed, "SSL_ENGINE_INITFAILED", .tls),
    row(Code.sslCRLBadFile, "SSL_CRL_BADFILE", .tls),
    row(Code.useSSLFailed, "USE_SSL_FAILED", .tls),
    row(Code.sendError, "SEND_ERROR", .connectionLost, reached: true),
    row(Code.recvError, "RECV_ERROR", .connectionLost, reached: true),
    row(Code.gotNothing, "GOT_NOTHING", .connectionLost, reached: true),
    // The reply ended before its length: a truncated reply (decision 2436).
    row(Code.partialFile, "PARTIAL_FILE", .invalidResponse, reached: true),
    row(Code.http2, "HTTP2", .connectionLost, reached: true),
    row(Code.http2Stream, "HTTP2_STREAM", .connectionLost, reached: true),
    row(Code.http3, "HTTP3", .connectionLost, reached: true),
    row(Code.uploadFailed, "UPLOAD_FAILED", .connectionLost, reached: true),
    row(Code.sendFailRewind, "SEND_FAIL_REWIND", .connectionLost, reached: true),
    row(Code.weirdServerReply, "WEIRD_SERVER_REPLY", .invalidResponse, reached: true),
    row(Code.unsupportedProtocol, "UNSUPPORTED_PROTOCOL", .invalidResponse, reached: true),
    row(Code.badContentEncoding, "BAD_CONTENT_ENCODING", .invalidResponse, reached: true),
    row(Code.tooManyRedirects, "TOO_MANY_REDIRECTS", .invalidResponse, reached: true),
    row(Code.filesizeExceeded, "FILESIZE_EXCEEDED", .invalidResponse, reached: true),
    row(Code.writeError, "WRITE_ERROR", .invalidResponse, reached: true),
    row(Code.abortedByCallback, "ABORTED_BY_CALLBACK", .cancelled),
    row(Code.readError, "READ_ERROR", .fileUnavailable),
    row(Code.urlMalformat, "URL_MALFORMAT", .invalidInput),
    row(Code.badFunctionArgument, "BAD_FUNCTION_ARGUMENT", .invalidInput),
    row(Code.failedInit, "FAILED_INIT", .connectionLost),
    row(Code.outOfMemory, "OUT_OF_MEMORY", .connectionLost),
    row(Code.unrecoverablePoll, "UNRECOVERABLE_POLL", .connectionLost),
    row(81, "AGAIN (unlisted)", .connectionLost, reached: true),
    row(81, "AGAIN (unlisted)", .offline, offline: true),
    row(1000, "a code from a newer libcurl", .connectionLost, reached: true),
  ]

  @Test(arguments: rows)
  func classify(_ row: Row) {
    let outcome = CurlErrorTable.classify(curlCode: row.code, offline: row.offline)
    #expect(outcome.kind == row.kind)
    #expect(outcome.mayHaveReachedServer == row.reached)
  }

  @Test("nothing written to the connection means the server cannot have processed it")
  func requestNotSent() {
    for code in [Code.operationTimedOut, Code.sendError, Code.recvError, Code.gotNothing] {
      let outcome = CurlErrorTable.classify(curlCode: code, offline: false, requestSent: false)
      #expect(outcome.mayHaveReachedServer == false, "code \(code)")
      #expect(
        outcome.kind == CurlErrorTable.classify(curlCode: code, offline: false).kind,
        "code \(code)")
    }
  }

  /// The failures `CourierError` counts as transient (CourierErrorTests checks the mapping).
  static let transient: Set<TransportFailure> = [
    .offline, .dns, .cannotReachHost, .timedOut, .connectionLost,
  ]

  @Test("the codes that are retried map to transient failures, the others never")
  func transience() {
    let transient: Set<Int> = [
      Code.couldntResolveHost, Code.couldntConnect, Code.operationTimedOut, Code.sendError,
      Code.recvError, Code.gotNothing,
    ]
    for code in transient {
      let kind = CurlErrorTable.classify(curlCode: code, offline: false).kind
      #expect(Self.transient.contains(kind), "code \(code)")
    }
    for code in [
      Code.peerFailedVerification, Code.abortedByCallback, Code.weirdServerReply, Code.partialFile,
    ] {
      let kind = CurlErrorTable.classify(curlCode: code, offline: false).kind
      #expect(!Self.transient.contains(kind), "code \(code)")
    }
  }

  @Test("TLS failures a person can act on get a code: pins, trust, the client certificate")
  func tlsCodes() {
    #expect(
      CurlErrorTable.tlsCode(curlCode: Code.sslPinnedPubKeyNotMatch, detail: "")
        == "tls_pin_mismatch")
    #expect(
      CurlErrorTable.tlsCode(curlCode: Code.peerFailedVerification, detail: "") == "tls_untrusted")
    #expect(
      CurlErrorTable.tlsCode(curlCode: Code.sslCertProblem, detail: "") == "tls_client_certificate")
    #expect(CurlErrorTable.tlsCode(curlCode: Code.sslCACertBadFile, detail: "") == "tls_ca_bundle")
    #expect(
      CurlErrorTable.tlsCode(curlCode: Code.sslConnectError, detail: "wrong version number") == nil)
    #expect(
      CurlErrorTable.tlsCode(curlCode: Code.recvError, detail: "Connection reset by peer") == nil)
    for code in [Code.sslPinnedPubKeyNotMatch, Code.peerFailedVerification, Code.sslCertProblem] {
      #expect(CurlErrorTable.classify(curlCode: code, offline: false).kind == .tls, "code \(code)")
    }
  }

  @Test("a TLS 1.3 server's alert refusing the client certificate is told from a lost connection")
  func certificateAlerts() {
    let alerts = [
      "OpenSSL SSL_read: OpenSSL/3.0.19: error:0A00045C:SSL routines::tlsv13 alert certificate "
        + "required, errno 0",
      "OpenSSL SSL_read: error:0A000418:SSL routines::tlsv1 alert unknown ca, errno 0",
      "OpenSSL SSL_read: error:0A000412:SSL routines::sslv3 alert bad certificate, errno 0",
    ]
    for detail in alerts {
      #expect(CurlErrorTable.isCertificateAlert(curlCode: Code.recvError, detail: detail))
      #expect(
        CurlErrorTable.tlsCode(curlCode: Code.recvError, detail: detail) == "tls_client_certificate"
      )
    }
    #expect(
      !CurlErrorTable.isCertificateAlert(
        curlCode: Code.recvError, detail: "Connection reset by peer"))
    #expect(!CurlErrorTable.isCertificateAlert(curlCode: Code.gotNothing, detail: alerts[0]))
  }
}
