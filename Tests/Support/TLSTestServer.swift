import Foundation

/// An HTTPS server on loopback for the TLS tests (`Tests/Support/tls-server.py`): answers every
/// request 200 with JSON naming the method, path, client certificate's common name and
/// `Authorization`, and counts the TCP connections it accepts, before any handshake.
public final class TLSTestServer: Sendable {
  /// The port, on 127.0.0.1.
  public let port: Int
  private let process: Process
  private let countFile: URL

  /// Starts a server.
  /// - Parameters:
  ///   - certificate: its certificate.
  ///   - key: its key.
  ///   - clientCA: when given, a client certificate signed by this CA is required.
  /// - Throws: when it does not start.
  public init(certificate: URL, key: URL, clientCA: URL? = nil) throws {
    countFile = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-tls-count-\(UUID().uuidString)")
    let script = ReferenceBackend.repositoryRoot.appendingPathComponent(
      "Tests/Support/tls-server.py")
    process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments =
      [script.path, "--cert", certificate.path, "--key", key.path, "--count", countFile.path]
      + (clientCA.map { ["--client-ca", $0.path] } ?? [])
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    try process.run()
    // The first line is the port, printed once the server listens.
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = pipe.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      line += chunk
    }
    guard
      let port = Int(
        String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    else {
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
      process.waitUntilExit()
      throw POSIXError(.EIO)
    }
    self.port = port
  }

  /// A URL of the server.
  /// - Parameters:
  ///   - path: the path.
  ///   - host: the host name used (`127.0.0.1`, `localhost`).
  /// - Returns: the URL.
  public func url(_ path: String = "/", host: String = "127.0.0.1") -> URL {
    URL(string: "https://\(host):\(port)\(path)") ?? URL(fileURLWithPath: "/")
  }

  /// How many TCP connections it has accepted so far.
  public var connections: Int {
    (try? String(contentsOf: countFile, encoding: .utf8)).flatMap {
      Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
    } ?? 0
  }

  /// Stops the server.
  public func stop() {
    // Started from a concurrency thread, it may ignore SIGTERM (inherited mask): SIGKILL.
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    try? FileManager.default.removeItem(at: countFile)
  }

  deinit { stop() }
}
