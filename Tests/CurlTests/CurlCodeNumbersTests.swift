import CCurl
import CourierDomain
import CourierSystem
import Testing

/// `CurlErrorTable` speaks numbers so the domain imports no C: check them against curl.h.
@Suite("CurlErrorTable's numbers match the linked libcurl")
struct CurlCodeNumbersTests {
  typealias Code = CurlErrorTable.Code

  static let pairs: [(Int, CURLcode)] = [
    (Code.unsupportedProtocol, CURLE_UNSUPPORTED_PROTOCOL), (Code.failedInit, CURLE_FAILED_INIT),
    (Code.urlMalformat, CURLE_URL_MALFORMAT),
    (Code.couldntResolveProxy, CURLE_COULDNT_RESOLVE_PROXY),
    (Code.couldntResolveHost, CURLE_COULDNT_RESOLVE_HOST),
    (Code.couldntConnect, CURLE_COULDNT_CONNECT), (Code.weirdServerReply, CURLE_WEIRD_SERVER_REPLY),
    (Code.http2, CURLE_HTTP2), (Code.partialFile, CURLE_PARTIAL_FILE),
    (Code.writeError, CURLE_WRITE_ERROR), (Code.uploadFailed, CURLE_UPLOAD_FAILED),
    (Code.readError, CURLE_READ_ERROR), (Code.outOfMemory, CURLE_OUT_OF_MEMORY),
    (Code.operationTimedOut, CURLE_OPERATION_TIMEDOUT),
    (Code.sslConnectError, CURLE_SSL_CONNECT_ERROR),
    (Code.abortedByCallback, CURLE_ABORTED_BY_CALLBACK),
    (Code.badFunctionArgument, CURLE_BAD_FUNCTION_ARGUMENT),
    (Code.interfaceFailed, CURLE_INTERFACE_FAILED),
    (Code.tooManyRedirects, CURLE_TOO_MANY_REDIRECTS), (Code.gotNothing, CURLE_GOT_NOTHING),
    (Code.sslEngineNotFound, CURLE_SSL_ENGINE_NOTFOUND),
    (Code.sslEngineSetFailed, CURLE_SSL_ENGINE_SETFAILED), (Code.sendError, CURLE_SEND_ERROR),
    (Code.recvError, CURLE_RECV_ERROR), (Code.sslCertProblem, CURLE_SSL_CERTPROBLEM),
    (Code.sslCipher, CURLE_SSL_CIPHER),
    (Code.peerFailedVerification, CURLE_PEER_FAILED_VERIFICATION),
    (Code.badContentEncoding, CURLE_BAD_CONTENT_ENCODING),
    (Code.filesizeExceeded, CURLE_FILESIZE_EXCEEDED), (Code.useSSLFailed, CURLE_USE_SSL_FAILED),
    (Code.sendFailRewind, CURLE_SEND_FAIL_REWIND),
    (Code.sslEngineInitFailed, CURLE_SSL_ENGINE_INITFAILED),
    (Code.sslCACertBadFile, CURLE_SSL_CACERT_BADFILE),
    (Code.sslShutdownFailed, CURLE_SSL_SHUTDOWN_FAILED),
    (Code.sslCRLBadFile, CURLE_SSL_CRL_BADFILE),
    (Code.sslIssuerError, CURLE_SSL_ISSUER_ERROR),
    (Code.sslPinnedPubKeyNotMatch, CURLE_SSL_PINNEDPUBKEYNOTMATCH),
    (Code.sslInvalidCertStatus, CURLE_SSL_INVALIDCERTSTATUS),
    (Code.http2Stream, CURLE_HTTP2_STREAM),
    (Code.http3, CURLE_HTTP3), (Code.quicConnectError, CURLE_QUIC_CONNECT_ERROR),
    (Code.proxy, CURLE_PROXY), (Code.sslClientCert, CURLE_SSL_CLIENTCERT),
    (Code.unrecoverablePoll, CURLE_UNRECOVERABLE_POLL),
  ]

  @Test("every named code equals curl.h's")
  func numbers() {
    for (number, code) in Self.pairs {
      #expect(number == Int(code.rawValue), "\(String(cString: curl_easy_strerror(code)))")
    }
  }
}
