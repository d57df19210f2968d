import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The reference backend with its IETF resumable uploads server (Docs/ietf-upload.md) on a
/// second port, a whole base URL that passes everything but the draft's requests to the main
/// one, started once for a suite (``SharedIETFBackend``).
public final class IETFBackend: Sendable {
  /// The backend (its main port, its hooks).
  public let backend: ReferenceBackend
  /// The IETF port's base URL.
  public let url: URL

  /// Starts the backend with the IETF server on a free port and waits until it listens.
  /// - Throws: when either does not come up within 120 s.
  public init() async throws {
    let portFile = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-ietf-port-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: portFile) }
    backend = try await ReferenceBackend(environment: [
      "COURIER_BACKEND_IETF_PORT": "0", "COURIER_BACKEND_IETF_PORT_FILE": portFile.path,
    ])
    let deadline = ContinuousClock.now + .seconds(120)
    var port: Int?
    while port == nil && ContinuousClock.now < deadline {
      port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap {
        Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
      if port == nil { try await Task.sleep(for: .milliseconds(50)) }
    }
    guard let port, let url = URL(string: "http://127.0.0.1:\(port)") else {
      backend.stop()
      throw POSIXError(.ETIMEDOUT)
    }
    self.url = url
  }

  /// Sends a request to the IETF port (its test hooks), outside the code under test.
  /// - Parameters:
  ///   - method: the method.
  ///   - path: the path.
  ///   - json: a JSON body.
  /// - Returns: the status and body.
  /// - Throws: when the request fails.
  @discardableResult
  public func call(_ method: String, _ path: String, json: String? = nil) async throws -> (
    status: Int, body: Data
  ) {
    var request = URLRequest(url: url.appendingPathComponent(path))
    request.httpMethod = method
    if let json {
      request.httpBody = Data(json.utf8)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
  }

  /// The draft's uploads the server holds (`GET /__ietf/uploads`), oldest first.
  /// - Returns: the uploads (`offset`, `state`, `bytes_received`, `writing`, …).
  /// - Throws: when the answer is not a JSON list.
  public func uploads() async throws -> [[String: Any]] {
    let (_, body) = try await call("GET", "/__ietf/uploads")
    return try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
  }

  /// The content bytes the server read for all its uploads, whatever became of them.
  /// - Returns: the sum of `bytes_received`.
  /// - Throws: when the uploads cannot be read.
  public func bytesReceived() async throws -> Int {
    try await uploads().reduce(0) { $0 + (($1["bytes_received"] as? Int) ?? 0) }
  }

  /// Stops the backend.
  public func stop() { backend.stop() }
}

/// One ``IETFBackend`` for a whole suite, reset by the suite's tests (``fresh()``).
public struct SharedIETFBackend: SuiteTrait, TestScoping {
  /// The backend of the running suite.
  @TaskLocal public static var current: IETFBackend?

  /// Starts the backend, runs the suite with it, stops it.
  /// - Parameters:
  ///   - test: the suite.
  ///   - testCase: unused.
  ///   - function: the suite's tests.
  /// - Throws: when the backend does not start, or what the tests throw.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    let backend = try await IETFBackend()
    var failure: (any Error)?
    do {
      try await Self.$current.withValue(backend) { try await function() }
    } catch {
      failure = error
    }
    backend.stop()
    if let failure { throw failure }
  }

  /// The running suite's backend, reset to a clean state (its uploads and limits too).
  /// - Returns: the backend.
  /// - Throws: when the suite has no such backend or the reset fails.
  public static func fresh() async throws -> IETFBackend {
    guard let backend = current else { throw POSIXError(.ENODEV) }
    try await backend.backend.call("POST", "/__reset")
    return backend
  }
}

extension Trait where Self == SharedIETFBackend {
  /// Starts one reference backend with its IETF server around the suite.
  public static var sharedIETFBackend: SharedIETFBackend { SharedIETFBackend() }
}

/// A TCP proxy on loopback (`Tests/Support/cutting-proxy.py`) in front of a port, that cuts the
/// first connection sending more than a number of bytes towards the server, exactly there, and
/// lets the client learn of it only once the server has closed its side.
public final class CuttingProxy: Sendable {
  /// The proxy's port, on 127.0.0.1.
  public let port: Int
  private let process: Process
  private let input: Pipe
  private let countFile: URL

  /// Starts a proxy.
  /// - Parameters:
  ///   - upstream: the port it forwards to, on 127.0.0.1.
  ///   - cutAfter: the bytes (heads included) after which the first such connection is cut;
  ///     nil never to cut.
  ///   - stall: true to stall that connection there instead, until the client goes away.
  /// - Throws: when it does not start.
  public init(upstream: Int, cutAfter: Int?, stall: Bool = false) throws {
    countFile = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-proxy-count-\(UUID().uuidString)")
    let script = ReferenceBackend.repositoryRoot.appendingPathComponent(
      "Tests/Support/cutting-proxy.py")
    process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments =
      [
        script.path, "--upstream", String(upstream), "--cut-after", String(cutAfter ?? -1),
        "--count", countFile.path,
      ] + (stall ? ["--stall"] : [])
    let pipe = Pipe()
    input = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    process.standardInput = input
    try process.run()
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

  /// The proxy's base URL.
  public var url: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

  /// The bytes forwarded towards the server so far, heads included.
  public var forwarded: Int {
    (try? String(contentsOf: countFile, encoding: .utf8)).flatMap {
      Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
    } ?? 0
  }

  /// Stops the proxy.
  public func stop() {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    try? input.fileHandleForWriting.close()
    try? FileManager.default.removeItem(at: countFile)
  }
}
