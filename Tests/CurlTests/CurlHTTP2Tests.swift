import CourierCurl
import CourierDomain
import CourierPorts
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

/// HTTP/2 where libcurl offers it: over TLS, chosen by ALPN. The peer is nghttpd (Debian's
/// nghttp2-server, installed by scripts/setup), which speaks nothing but HTTP/2: a 200 from it
/// is proof of HTTP/2, and its frame log (`-v`, `[id=N]` per connection) shows the streams.
@Suite("CurlTransport over HTTP/2", .serialized)
struct CurlHTTP2Tests {
  static let nghttpd = "/usr/sbin/nghttpd"

  static func server(_ options: [String] = []) throws -> CurlTLSTests.TLSServer {
    try #require(
      FileManager.default.isExecutableFile(atPath: nghttpd),
      "nghttpd is missing: run scripts/setup (package nghttp2-server)")
    return try CurlTLSTests.TLSServer { port, key, certificate, directory in
      let site = directory.appendingPathComponent("www")
      try? FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
      try? Data("hello over h2\n".utf8).write(to: site.appendingPathComponent("hello.txt"))
      return [
        nghttpd, "-a", "127.0.0.1", "-d", site.path, "-v",
      ] + options + ["\(port)", key.path, certificate.path]
    }
  }

  /// The connection number of every request the server received (`[id=N] … recv HEADERS`).
  static func connections(_ log: String) -> [String] {
    log.split(separator: "\n").filter { $0.contains("recv HEADERS frame") }.compactMap { line in
      line.split(separator: "]").first.map { String($0) + "]" }
    }
  }

  @Test("a TLS server that speaks only HTTP/2 answers; eight requests at once share one connection")
  func negotiated() async throws {
    let server = try Self.server()
    defer { server.stop() }
    let transport = CurlTransport(configuration: .init(tls: .init(caBundle: server.certificate)))
    try await server.ready(transport)
    let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/hello.txt"))
    let before = Self.connections(server.log).count
    let responses = try await withThrowingTaskGroup(of: (HTTPResponse, ResponseBody).self) {
      group in
      for _ in 0..<8 {
        group.addTask { try await transport.send(HTTPRequest(method: .get, url: url)) }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(responses.count == 8)
    #expect(responses.allSatisfy { $0.0.status == 200 })
    #expect(
      responses.allSatisfy { String(decoding: $0.1.bytes, as: UTF8.self) == "hello over h2\n" })
    let streams = Self.connections(server.log).dropFirst(before)
    #expect(streams.count == 8, "\(server.log)")
    #expect(Set(streams).count == 1, "the eight requests used \(Set(streams)) connections")
  }

  /// nghttpd sends the trailers (its log shows the HEADERS frame after the DATA), but libcurl
  /// 7.88 (Debian 12's) does not hand HTTP/2 trailers to the header callback (the curl
  /// command does not show them either): they are never merged, and exact when they come.
  @Test("HTTP/2 trailers never reach the header fields; exact when libcurl hands them over")
  func trailers() async throws {
    let server = try Self.server(["--trailer", "x-checksum: abc"])
    defer { server.stop() }
    let transport = CurlTransport(configuration: .init(tls: .init(caBundle: server.certificate)))
    try await server.ready(transport)
    let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/hello.txt"))
    let (response, body) = try await transport.send(HTTPRequest(method: .get, url: url))
    #expect(response.status == 200)
    #expect(String(decoding: body.bytes, as: UTF8.self) == "hello over h2\n")
    #expect(response.headerFields[.named("x-checksum")] == nil, "\(response.headerFields)")
    if let trailers = body.trailerFields {
      #expect(trailers == [.named("x-checksum"): "abc"])
    }
  }

  @Test("with HTTP/2 switched off the request is HTTP/1.1, which this server refuses")
  func switchedOff() async throws {
    let server = try Self.server()
    defer { server.stop() }
    try await server.ready(
      CurlTransport(configuration: .init(tls: .init(caBundle: server.certificate))))
    let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/hello.txt"))
    let http1 = CurlTransport(
      configuration: .init(tls: .init(caBundle: server.certificate), allowsHTTP2: false))
    do {
      let (response, _) = try await http1.send(
        HTTPRequest(method: .get, url: url), options: TransportOptions(deadline: .seconds(10)))
      Issue.record("an HTTP/1.1 request got \(response.status) from an HTTP/2-only server")
    } catch let error as CourierError {
      #expect(error.kind == .connectionLost || error.kind == .invalidResponse, "\(error)")
    }
  }
}
