import CourierCurl
import CourierDomain
import CourierPorts
import CourierTestSupport
import Foundation
import HTTPTypes
import Testing

/// TLS verification is on by default: a self-signed server fails as `tls`, and trusting its
/// certificate explicitly (a CA bundle) makes it work. The server is `openssl s_server` on
/// loopback with a certificate made for the test.
@Suite("CurlTransport over TLS")
struct CurlTLSTests {
  final class TLSServer: Sendable {
    let port: Int
    let certificate: URL
    let directory: URL
    let process: Process
    /// What the server printed (nghttpd's `-v` frame log; nothing for openssl).
    var log: String {
      (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8))
        ?? ""
    }

    /// Starts a TLS server on loopback with a certificate made for it.
    /// - Parameter command: the server's executable and arguments, given its port, key and
    ///   certificate and a directory of its own; `openssl s_server -www` by default.
    init(
      command: (_ port: Int, _ key: URL, _ certificate: URL, _ directory: URL) -> [String] = {
        port, key, certificate, _ in
        [
          "/usr/bin/openssl", "s_server", "-accept", "127.0.0.1:\(port)", "-cert",
          certificate.path, "-key", key.path, "-www", "-quiet",
        ]
      }
    ) throws {
      directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "courier-tls-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      certificate = directory.appendingPathComponent("cert.pem")
      let key = directory.appendingPathComponent("key.pem")
      try Self.run(
        "/usr/bin/openssl",
        [
          "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
          "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
          "-keyout", key.path, "-out", certificate.path,
        ])
      port = freeLoopbackPort()
      let argv = command(port, key, certificate, directory)
      process = Process()
      process.executableURL = URL(fileURLWithPath: argv[0])
      process.arguments = Array(argv.dropFirst())
      let logFile = directory.appendingPathComponent("server.log")
      _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
      process.standardOutput = try FileHandle(forWritingTo: logFile)
      process.standardError = FileHandle.nullDevice
      try process.run()
    }

    static func run(_ tool: String, _ arguments: [String]) throws {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: tool)
      process.arguments = arguments
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      process.waitUntilExit()
      guard process.terminationStatus == 0 else { throw POSIXError(.EIO) }
    }

    /// Waits until the server accepts a TLS request (it fails verification until trusted).
    func ready(_ transport: CurlTransport) async throws {
      let url = try #require(URL(string: "https://127.0.0.1:\(port)/"))
      let deadline = ContinuousClock.now + .seconds(30)
      while ContinuousClock.now < deadline {
        do {
          _ = try await transport.send(HTTPRequest(method: .get, url: url))
          return
        } catch let error as CourierError where error.kind == .cannotReachHost {
          try await Task.sleep(for: .milliseconds(50))
        } catch {
          return
        }
      }
    }

    func stop() {
      // Spawned from a concurrency thread it may ignore SIGTERM (inherited mask): SIGKILL.
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
      process.waitUntilExit()
      try? FileManager.default.removeItem(at: directory)
    }
  }

  @Test("a self-signed certificate fails as tls; trusted through a CA bundle, it works")
  func verification() async throws {
    let server = try TLSServer()
    defer { server.stop() }
    let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/"))
    let strict = CurlTransport()
    try await server.ready(strict)
    do {
      _ = try await strict.send(HTTPRequest(method: .get, url: url))
      Issue.record("a self-signed certificate was accepted")
    } catch let error as CourierError {
      #expect(error.kind == .tls)
      #expect(error.underlying?.contains("CURLcode 60") == true)
    }
    let trusting = CurlTransport(configuration: .init(tls: .init(caBundle: server.certificate)))
    let (response, _) = try await trusting.send(HTTPRequest(method: .get, url: url))
    #expect(response.status == 200)
  }

  @Test("TLS to a plain HTTP port fails as tls")
  func plainPort() async throws {
    // A plain HTTP server that answers at once, as a real one does to bytes it can't parse.
    let script = """
      import socket, sys
      s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
      print(s.getsockname()[1], flush=True)
      c, _ = s.accept(); c.recv(4096)
      c.sendall(b"HTTP/1.1 400 Bad Request\\r\\nContent-Length: 0\\r\\n\\r\\n"); c.close()
      """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", script]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    defer {
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
      process.waitUntilExit()
    }
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = pipe.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      line += chunk
    }
    let port = try #require(
      Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
    let url = try #require(URL(string: "https://127.0.0.1:\(port)/"))
    do {
      _ = try await CurlTransport().send(
        HTTPRequest(method: .get, url: url), options: TransportOptions(deadline: .seconds(10)))
      Issue.record("expected a failure")
    } catch let error as CourierError {
      #expect(error.kind == .tls)
    }
  }
}
