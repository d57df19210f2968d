import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The project's reference backend (Backend/), started on a free loopback port for one test
/// suite and stopped afterwards. State lives in a temporary directory of its own. Over HTTPS
/// when given a ``TLS``: its test hooks then go through `curl` with the PKI's CA and client
/// certificate (FoundationNetworking cannot be told to trust another CA).
public final class ReferenceBackend: Sendable {
  /// HTTPS with a test PKI.
  public struct TLS: Sendable {
    /// The certificates.
    public var pki: TestPKI
    /// Whether the backend requires a client certificate signed by the PKI's CA.
    public var requiresClientCertificate: Bool

    /// HTTPS with `pki`'s server certificate.
    /// - Parameters:
    ///   - pki: the certificates.
    ///   - requiresClientCertificate: whether a client certificate is required (mutual TLS).
    public init(pki: TestPKI, requiresClientCertificate: Bool = false) {
      self.pki = pki
      self.requiresClientCertificate = requiresClientCertificate
    }
  }

  /// The base URL.
  public let url: URL
  /// The port.
  public let port: Int
  /// HTTPS's settings, when it serves HTTPS.
  public let tls: TLS?
  private let process: Process
  private let dataDirectory: URL

  /// The repository's root, found from this file's path.
  public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// Starts a backend and waits until `/health` answers (bounded).
  ///
  /// The port is found free and closed again before the backend binds it, so another process
  /// can take it in between (a server bound to port 0 by another suite): a backend that exits
  /// before it answers is started again on another port, up to five times.
  /// - Parameters:
  ///   - host: the address to bind (loopback by default; a namespace's address otherwise).
  ///   - environment: extra environment (`COURIER_BACKEND_TOKEN_TTL`...).
  ///   - launcher: a command prefix (`ip netns exec NAME`) to run it elsewhere.
  ///   - tls: HTTPS with a test PKI; plain HTTP when nil.
  /// - Throws: `ETIMEDOUT` when it does not come up within 120 s, `EADDRINUSE` when it exited
  ///   before answering five times.
  public init(
    host: String = "127.0.0.1", environment: [String: String] = [:], launcher: [String] = [],
    tls: TLS? = nil
  )
    async throws
  {
    let data = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-backend-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
    let deadline = ContinuousClock.now + .seconds(120)
    for _ in 1...5 {
      let port = freeLoopbackPort()
      let process = Process()
      let script = Self.repositoryRoot.appendingPathComponent("Backend/run.sh").path
      var command = launcher + ["/bin/bash", script, "--host", host, "--port", String(port)]
      if let tls {
        command += ["--tls", tls.pki.directory.path]
        if tls.requiresClientCertificate { command += ["--client-certs", "required"] }
      }
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = command
      var env = ProcessInfo.processInfo.environment
      env["COURIER_BACKEND_DATA"] = data.path
      // The backend ends itself if this process ends first (crash, early exit, kill -9).
      env["COURIER_BACKEND_EXIT_WITH_PARENT"] = "1"
      for (key, value) in environment { env[key] = value }
      process.environment = env
      let log = FileHandle(forWritingAtPath: "/dev/null")
      process.standardOutput = log
      process.standardError = log
      try process.run()
      let url =
        URL(string: "\(tls == nil ? "http" : "https")://\(host):\(port)")
        ?? URL(fileURLWithPath: "/")
      while ContinuousClock.now < deadline, process.isRunning {
        if await Self.isHealthy(url, tls: tls) {
          self.process = process
          self.port = port
          self.dataDirectory = data
          self.tls = tls
          self.url = url
          return
        }
        try await Task.sleep(for: .milliseconds(100))
      }
      if process.isRunning {
        // Still starting after the deadline: stopped, and reported as such.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: data)
        throw POSIXError(.ETIMEDOUT)
      }
    }
    try? FileManager.default.removeItem(at: data)
    throw POSIXError(.EADDRINUSE)
  }

  /// Sends a raw request to the backend (test hooks), outside the code under test.
  /// - Parameters:
  ///   - method: the method.
  ///   - path: the path.
  ///   - json: a JSON body.
  ///   - headers: header fields.
  /// - Returns: the status and body.
  /// - Throws: when the request fails.
  @discardableResult
  public func call(
    _ method: String, _ path: String, json: String? = nil, headers: [String: String] = [:]
  )
    async throws -> (status: Int, body: Data)
  {
    if let tls {
      return try await Self.curl(tls, method, url.appendingPathComponent(path), json, headers)
    }
    var request = URLRequest(url: url.appendingPathComponent(path))
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let json {
      request.httpBody = Data(json.utf8)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
  }

  /// The backend's request log (`GET /__log`).
  /// - Returns: the entries.
  /// - Throws: when it cannot be read.
  public func log() async throws -> [[String: Any]] {
    let (_, body) = try await call("GET", "/__log")
    let json = try JSONSerialization.jsonObject(with: body)
    if let list = json as? [[String: Any]] { return list }
    if let object = json as? [String: Any], let list = object["log"] as? [[String: Any]] {
      return list
    }
    return []
  }

  /// Stops the backend and removes its data.
  public func stop() {
    // Never blocks the caller: tests call this from Swift concurrency's small thread pool, and
    // blocking it there starves every other test. A plain thread does the waiting.
    let process = self.process
    let dataDirectory = self.dataDirectory
    guard process.isRunning else {
      try? FileManager.default.removeItem(at: dataDirectory)
      return
    }
    process.terminate()
    let reaper = Thread {
      // A backend started from a thread that blocks signals (a Swift concurrency or dispatch
      // worker) inherits that mask and ignores SIGTERM: give it a moment, then SIGKILL.
      let grace = ContinuousClock.now + .seconds(1)
      while process.isRunning && ContinuousClock.now < grace { usleep(20_000) }
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
      process.waitUntilExit()
      try? FileManager.default.removeItem(at: dataDirectory)
    }
    reaper.start()
  }

  deinit { stop() }

  /// One request through `curl` with the PKI's CA and client certificate.
  static func curl(
    _ tls: TLS, _ method: String, _ url: URL, _ json: String?, _ headers: [String: String],
    timeout: Int = 30
  ) async throws -> (status: Int, body: Data) {
    var arguments =
      ["curl", "-sS", "--max-time", String(timeout), "-X", method, "-w", "\n%{http_code}"]
      + tls.pki.curlArguments
    for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
    if json != nil {
      arguments += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
    }
    let result = try await ChildProcess.run(arguments + [url.absoluteString], input: json)
    guard result.succeeded, let newline = result.stdout.lastIndex(of: "\n"),
      let status = Int(result.stdout[result.stdout.index(after: newline)...])
    else { throw POSIXError(.EIO) }
    return (status, Data(result.stdout[..<newline].utf8))
  }

  static func isHealthy(_ url: URL, tls: TLS?) async -> Bool {
    if let tls {
      let answer = try? await curl(
        tls, "GET", url.appendingPathComponent("health"), nil, [:], timeout: 2)
      return answer?.status == 200
    }
    var request = URLRequest(url: url.appendingPathComponent("health"))
    request.timeoutInterval = 2
    guard let (_, response) = try? await URLSession.shared.data(for: request) else { return false }
    return (response as? HTTPURLResponse)?.statusCode == 200
  }
}
