import Foundation

/// The reference backend (Backend/) started inside the server's namespace of a
/// `LinkedNamespaces`, listening on the link's address. Its test hooks (`/__*`, loopback only)
/// are called with curl inside that namespace. Its data lives in a temporary folder of its
/// own; `stop()` ends it (it also ends itself when the test process does).
public final class NamespacedBackend: Sendable {
  /// The base URL the client uses (the server's link address).
  public let url: URL
  /// The port.
  public let port: Int
  private let namespaces: LinkedNamespaces
  private let process: Process
  private let dataDirectory: URL

  /// Starts the backend and waits (bounded) until `/health` answers inside the namespace.
  /// - Parameters:
  ///   - namespaces: the namespaces; the backend runs in the server's.
  ///   - environment: extra environment for the backend.
  /// - Throws: when it does not come up within 120 s (with what it printed).
  public init(in namespaces: LinkedNamespaces, environment: [String: String] = [:]) async throws {
    let port = 18_000 + Int(getpid() % 20_000)
    let data = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-nsbackend-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
    let log = data.appendingPathComponent("backend.log")
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    let script = ReferenceBackend.repositoryRoot.appendingPathComponent("Backend/run.sh").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments =
      namespaces.inServer + ["/bin/bash", script, "--host", "0.0.0.0", "--port", String(port)]
    var env = ProcessInfo.processInfo.environment
    env["COURIER_BACKEND_DATA"] = data.appendingPathComponent("state").path
    env["COURIER_BACKEND_EXIT_WITH_PARENT"] = "1"
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let handle = try FileHandle(forWritingTo: log)
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    self.process = process
    self.port = port
    self.namespaces = namespaces
    self.dataDirectory = data
    url = URL(string: "http://\(namespaces.serverAddress):\(port)") ?? URL(fileURLWithPath: "/")
    let deadline = ContinuousClock.now + .seconds(120)
    while ContinuousClock.now < deadline && process.isRunning {
      if let (status, _) = try? await call("GET", "/health"), status == 200 { return }
      try await Task.sleep(for: .milliseconds(200))
    }
    let printed = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    stop()
    throw LinkedNamespaces.Failure(
      command: "Backend/run.sh in \(namespaces.server)", status: -1, output: printed)
  }

  /// Calls the backend from inside its namespace (test hooks, checks).
  /// - Parameters:
  ///   - method: the method.
  ///   - path: the path.
  ///   - json: a JSON body.
  ///   - token: a bearer token.
  /// - Returns: the status and the body.
  /// - Throws: when curl cannot run or reach it.
  @discardableResult
  public func call(_ method: String, _ path: String, json: String? = nil, token: String? = nil)
    async throws -> (status: Int, body: Data)
  {
    var command =
      namespaces.inServer + [
        "curl", "-s", "-o", "-", "-w", "\n%{http_code}", "-X", method,
        "http://127.0.0.1:\(port)\(path)",
      ]
    if let json { command += ["-H", "Content-Type: application/json", "--data-binary", json] }
    if let token { command += ["-H", "Authorization: Bearer \(token)"] }
    let (status, out, err) = try await LinkedNamespaces.run(command)
    guard status == 0, let newline = out.lastIndex(of: "\n"),
      let code = Int(out[out.index(after: newline)...])
    else {
      throw LinkedNamespaces.Failure(
        command: command.joined(separator: " "), status: status, output: out + err)
    }
    return (code, Data(out[..<newline].utf8))
  }

  /// A JSON answer of ``call(_:_:json:token:)``.
  /// - Parameters:
  ///   - method: the method.
  ///   - path: the path.
  ///   - json: a JSON body.
  ///   - token: a bearer token.
  /// - Returns: the decoded JSON (nil when the body is not JSON).
  /// - Throws: when the call fails.
  public func json(_ method: String, _ path: String, json: String? = nil, token: String? = nil)
    async throws -> Any?
  {
    let (_, body) = try await call(method, path, json: json, token: token)
    return try? JSONSerialization.jsonObject(with: body)
  }

  /// The uploads the backend holds (`GET /__uploads`), oldest first.
  /// - Returns: the uploads.
  /// - Throws: when the call fails.
  public func uploads() async throws -> [[String: Any]] {
    try await json("GET", "/__uploads") as? [[String: Any]] ?? []
  }

  /// The photos of alice (`GET /photos`, logged in as alice).
  /// - Returns: the photos.
  /// - Throws: when the calls fail.
  public func photos() async throws -> [[String: Any]] {
    let login = try await json(
      "POST", "/auth/token", json: #"{"username":"alice","password":"secret"}"#)
    let token = (login as? [String: Any])?["access_token"] as? String
    return try await json("GET", "/photos", token: token) as? [[String: Any]] ?? []
  }

  /// What the backend printed so far, for a failure message.
  public var printed: String {
    (try? String(contentsOf: dataDirectory.appendingPathComponent("backend.log"), encoding: .utf8))
      ?? ""
  }

  /// Stops the backend (SIGTERM, then SIGKILL on a thread of its own) and removes its data.
  public func stop() {
    let process = self.process
    let data = dataDirectory
    guard process.isRunning else {
      try? FileManager.default.removeItem(at: data)
      return
    }
    process.terminate()
    let reaper = Thread {
      let grace = ContinuousClock.now + .seconds(1)
      while process.isRunning && ContinuousClock.now < grace { usleep(20_000) }
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
      process.waitUntilExit()
      try? FileManager.default.removeItem(at: data)
    }
    reaper.start()
  }

  deinit { stop() }
}
