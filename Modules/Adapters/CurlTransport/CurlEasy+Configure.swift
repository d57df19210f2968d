import CCurl
import CCurlShim
import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#endif

// How a handle is configured for its transfer, and libcurl's options set with their errors
// classified: apart from the callbacks and the end of a transfer (CurlEasy.swift).
extension CurlEasy {
  /// Sets every option of the transfer: address, callbacks, method and body, headers, TLS,
  /// timeouts and the output file when the body goes to one.
  /// - Throws: `CourierError` when libcurl refuses an option or the output can't be opened.
  func configure(_ configuration: CurlTransport.Configuration) throws(CourierError) {
    let me = Unmanaged.passUnretained(self).toOpaque()
    try set(CURLOPT_URL, string: transfer.url)
    try set(CURLOPT_NOSIGNAL, 1)
    try set(CURLOPT_PROTOCOLS_STR, string: "http,https")
    // Redirects are followed by CurlTransport itself, only to the same origin (0503).
    try set(CURLOPT_FOLLOWLOCATION, 0)
    // "": every encoding this libcurl decodes (gzip, deflate, br, zstd as built), decoded
    // before the body reaches Courier, so `maxResponseBytes` bounds the decoded size.
    // Not for a sink: a 206's Content-Range counts the bytes as sent, so a decoded body
    // could not continue a partial file (decision 2500).
    if case .sink = transfer.sink {} else { try set(CURLOPT_ACCEPT_ENCODING, string: "") }
    try set(CURLOPT_ERRORBUFFER, pointer: errorBuffer)
    try set(
      CURLOPT_HTTP_VERSION,
      Int(configuration.allowsHTTP2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1))
    if configuration.allowsHTTP2 { try set(CURLOPT_PIPEWAIT, 1) }
    try configureTLS(configuration.tls)
    try set(CURLOPT_TCP_KEEPALIVE, 1)
    try set(CURLOPT_EXPECT_100_TIMEOUT_MS, 1000)
    try set(CURLOPT_UPLOAD_BUFFERSIZE, configuration.uploadBufferSize)
    try set(CURLOPT_BUFFERSIZE, 256 << 10)
    if let timeout = transfer.timeout {
      try set(CURLOPT_TIMEOUT_MS, max(1, Int((timeout.seconds * 1000).rounded(.up))))
    }

    try set(CURLOPT_HEADERDATA, pointer: me)
    try check(
      courier_curl_setopt_header(handle) { buffer, size, count, data in
        guard let buffer, let data else { return 0 }
        return Unmanaged<CurlEasy>.fromOpaque(data).takeUnretainedValue()
          .header(UnsafeRawPointer(buffer), size * count)
      }, "HEADERFUNCTION")
    try set(CURLOPT_WRITEDATA, pointer: me)
    try check(
      courier_curl_setopt_write(handle) { buffer, size, count, data in
        guard let buffer, let data else { return 0 }
        return Unmanaged<CurlEasy>.fromOpaque(data).takeUnretainedValue()
          .receive(UnsafeRawPointer(buffer), size * count)
      }, "WRITEFUNCTION")
    if transfer.progress != nil || transfer.idleTimeout != nil {
      // The callback also tells the idle timeout that bytes moved.
      try set(CURLOPT_NOPROGRESS, 0)
      try set(CURLOPT_XFERINFODATA, pointer: me)
      try check(
        courier_curl_setopt_xferinfo(handle) { data, downTotal, downNow, _, upNow in
          guard let data else { return 1 }
          return Unmanaged<CurlEasy>.fromOpaque(data).takeUnretainedValue()
            .progressed(downTotal: Int64(downTotal), downNow: Int64(downNow), upNow: Int64(upNow))
        }, "XFERINFOFUNCTION")
    }

    try configureMethodAndBody(configuration, me: me)
    try configureHeaders(configuration)
    if case .file(let destination) = transfer.sink { try openOutput(destination) }
  }

  /// Verification is always on; the settings add a CA bundle instead of the system's trust
  /// store, pins of the server's public key, and a client certificate (decision 2430).
  private func configureTLS(_ tls: CurlTransport.TLS) throws(CourierError) {
    try set(CURLOPT_SSL_VERIFYPEER, 1)
    try set(CURLOPT_SSL_VERIFYHOST, 2)
    if let bundle = tls.caBundle { try set(CURLOPT_CAINFO, string: bundle.path) }
    if let pins = tls.pinnedPublicKeysOption {
      try set(CURLOPT_PINNEDPUBLICKEY, string: pins)
    }
    if let certificate = tls.clientCertificate {
      try set(CURLOPT_SSLCERT, string: certificate.path)
      // Without a key file, libcurl reads the key from the certificate's file.
      if let key = tls.clientKey { try set(CURLOPT_SSLKEY, string: key.path) }
    }
  }

  private func configureMethodAndBody(
    _ configuration: CurlTransport.Configuration, me: UnsafeMutableRawPointer
  ) throws(CourierError) {
    let method = transfer.method.rawValue
    let framed = ["POST", "PUT", "PATCH"].contains(method)
    switch method {
    case "GET" where transfer.body == nil:
      try set(CURLOPT_HTTPGET, 1)
      return
    case "HEAD":
      try set(CURLOPT_NOBODY, 1)
      return
    default:
      break
    }
    if transfer.body != nil || framed {
      // An upload with a known size: libcurl sends Content-Length and pulls the bytes from the
      // read callback; the method is set apart since UPLOAD alone means PUT.
      reader = BodyReader(transfer.body ?? [], context: transfer.context)
      try set(CURLOPT_UPLOAD, 1)
      try check(
        courier_curl_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(transfer.bodyLength)),
        "INFILESIZE_LARGE")
      try set(CURLOPT_READDATA, pointer: me)
      try check(
        courier_curl_setopt_read(handle) { buffer, size, count, data in
          guard let buffer, let data else { return courier_curl_readfunc_abort }
          return Unmanaged<CurlEasy>.fromOpaque(data).takeUnretainedValue()
            .send(UnsafeMutableRawPointer(buffer), size * count)
        }, "READFUNCTION")
      try set(CURLOPT_SEEKDATA, pointer: me)
      try check(
        courier_curl_setopt_seek(handle) { data, offset, origin in
          guard let data, origin == SEEK_SET else { return courier_curl_seekfunc_cantseek }
          return Unmanaged<CurlEasy>.fromOpaque(data).takeUnretainedValue().rewind(
            to: Int64(offset))
        }, "SEEKFUNCTION")
    }
    if method != "PUT" || transfer.body == nil && !framed {
      try set(CURLOPT_CUSTOMREQUEST, string: method)
    }
  }

  private func configureHeaders(_ configuration: CurlTransport.Configuration) throws(CourierError) {
    var lines = transfer.headerLines
    if reader != nil && !transfer.hasExpectHeader {
      // Ask first for large bodies, so a 413 or 401 comes before the body rather than after;
      // never for small ones, where the round trip costs more than resending.
      lines.append(
        transfer.asksToContinue && transfer.bodyLength >= configuration.expectContinueThreshold
          ? "Expect: 100-continue" : "Expect:")
    }
    for line in lines {
      guard let appended = curl_slist_append(headerList, line) else {
        throw CourierError(
          .invalidInput, underlying: "curl_slist_append failed", context: transfer.context)
      }
      headerList = appended
    }
    if let headerList { try set(CURLOPT_HTTPHEADER, pointer: headerList) }
  }

  // MARK: options

  private func set(_ option: CURLoption, _ value: Int) throws(CourierError) {
    try check(courier_curl_setopt_long(handle, option, value), "option \(option.rawValue)")
  }

  private func set(_ option: CURLoption, string: String) throws(CourierError) {
    let code = string.withCString { courier_curl_setopt_ptr(handle, option, $0) }
    try check(code, "option \(option.rawValue)")
  }

  private func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer) throws(CourierError) {
    try check(courier_curl_setopt_ptr(handle, option, pointer), "option \(option.rawValue)")
  }

  private func set<T>(_ option: CURLoption, pointer: UnsafeMutablePointer<T>) throws(CourierError) {
    try set(option, pointer: UnsafeMutableRawPointer(pointer))
  }

  private func check(_ code: CURLcode, _ what: String) throws(CourierError) {
    guard code != CURLE_OK else { return }
    let outcome = CurlErrorTable.classify(
      curlCode: Int(code.rawValue), offline: false, requestSent: false)
    throw CourierError(
      outcome.kind == .invalidInput ? .invalidInput : .connectionLost,
      serverMessage: outcome.kind == .invalidInput
        ? "libcurl refused the request (\(String(cString: curl_easy_strerror(code))))." : nil,
      underlying: "curl_easy_setopt \(what): \(String(cString: curl_easy_strerror(code)))",
      context: transfer.context)
  }
}
