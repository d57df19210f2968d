import CourierTestSupport
import Foundation
import Testing

/// Runs a command to its end (`ChildProcess`: off the pool, stderr and a crash's backtrace kept).
@discardableResult
private func shell(_ arguments: [String], input: String? = nil) async throws
  -> ChildProcess.Result
{
  try await ChildProcess.run(arguments, input: input)
}

/// `courier sync --watch` in a network namespace whose only link goes down and up: writes
/// queued while it is down reach the server in order once it is back, without anyone
/// calling `sync`. The client (namespace A) and the backend (namespace B) are joined by a
/// veth pair created and removed here.
@Suite("Reconnect-triggered replay in a network namespace")
struct ReconnectReplayTests {
  static var root: Bool { getuid() == 0 }

  @Test("link down, writes queued, link up: the server receives them in order", .enabled(if: root))
  func reconnect() async throws {
    let binary = ReferenceBackend.repositoryRoot.appendingPathComponent(".build/debug/courier")
    try #require(FileManager.default.isExecutableFile(atPath: binary.path))
    let a = "csync-\(getpid())-a"
    let b = "csync-\(getpid())-b"
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("courier-ns-\(UUID())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    var processes: [Process] = []
    defer {
      for process in processes where process.isRunning {
        kill(process.processIdentifier, SIGKILL)
      }
      ChildProcess.runBlocking(["ip", "netns", "del", a])
      ChildProcess.runBlocking(["ip", "netns", "del", b])
      try? FileManager.default.removeItem(at: dir)
    }
    for command in [
      ["ip", "netns", "add", a], ["ip", "netns", "add", b],
      ["ip", "-n", a, "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", b],
      ["ip", "-n", b, "addr", "add", "10.79.0.2/24", "dev", "vb"],
      ["ip", "-n", b, "link", "set", "vb", "up"], ["ip", "-n", b, "link", "set", "lo", "up"],
      ["ip", "-n", a, "addr", "add", "10.79.0.1/24", "dev", "va"],
      ["ip", "-n", a, "link", "set", "va", "up"], ["ip", "-n", a, "link", "set", "lo", "up"],
      ["ip", "-n", a, "route", "add", "default", "via", "10.79.0.2", "dev", "va"],
    ] {
      let result = try await shell(command)
      try #require(result.status == 0, "\(command.joined(separator: " ")): \(result)")
    }
    let port = 18_000 + Int(getpid() % 1000)
    let base = "http://10.79.0.2:\(port)"
    let backend = Process()
    backend.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    backend.arguments = [
      "ip", "netns", "exec", b, "/bin/bash",
      ReferenceBackend.repositoryRoot.appendingPathComponent("Backend/run.sh").path,
      "--host", "10.79.0.2", "--port", String(port),
    ]
    var env = ProcessInfo.processInfo.environment
    env["COURIER_BACKEND_HOOKS"] = "all"
    env["COURIER_BACKEND_EXIT_WITH_PARENT"] = "1"
    env["COURIER_BACKEND_DATA"] = dir.appendingPathComponent("backend").path
    backend.environment = env
    // Its output goes to a file, shown when it does not start.
    let backendLog = dir.appendingPathComponent("backend.log")
    _ = FileManager.default.createFile(atPath: backendLog.path, contents: nil)
    backend.standardOutput = try FileHandle(forWritingTo: backendLog)
    backend.standardError = backend.standardOutput
    try backend.run()
    processes.append(backend)
    func curl(_ path: String) async throws -> String {
      try await shell(["ip", "netns", "exec", a, "curl", "-s", "-m", "2", base + path]).stdout
    }
    let up = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < up, try await !curl("/health").contains("true") {
      try await Task.sleep(for: .milliseconds(200))
    }
    try #require(
      try await curl("/health").contains("true"),
      """
      backend did not start in namespace \(b) (running: \(backend.isRunning)): \
      \((try? String(contentsOf: backendLog, encoding: .utf8)) ?? "")
      """)

    // The server is on a link of the test's own, not loopback: plain http is allowed to it.
    let courier = [
      "ip", "netns", "exec", a, binary.path, "--base-url", base, "--data-dir", dir.path,
      "--allow-insecure-http",
    ]
    let login = try await shell(
      courier + ["login", "--username", "alice", "--password-stdin"], input: "secret\n")
    try #require(login.succeeded, "login: \(login)")

    let watchOutput = dir.appendingPathComponent("watch.jsonl")
    _ = FileManager.default.createFile(atPath: watchOutput.path, contents: nil)
    let watch = Process()
    watch.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    watch.arguments = courier + ["sync", "--watch", "--json"]
    watch.environment = [
      "HOME": dir.path, "XDG_CONFIG_HOME": dir.appendingPathComponent("cfg").path,
    ]
    watch.standardOutput = try FileHandle(forWritingTo: watchOutput)
    let watchErrors = dir.appendingPathComponent("watch.err")
    _ = FileManager.default.createFile(atPath: watchErrors.path, contents: nil)
    watch.standardError = try FileHandle(forWritingTo: watchErrors)
    try watch.run()
    processes.append(watch)
    // The watcher's lines so far; the last one may still be half written.
    func watchLines() -> [Substring] {
      let text = (try? String(contentsOf: watchOutput, encoding: .utf8)) ?? ""
      return text.split(separator: "\n", omittingEmptySubsequences: false)
    }
    // Waits for a line containing `needle` anywhere after the first `skipping` complete lines:
    // the watcher may print other lines (a retry, a second path report) before or after it.
    func awaitWatch(_ needle: String, skipping: Int) async throws -> Bool {
      let deadline = ContinuousClock.now + .seconds(60)
      while ContinuousClock.now < deadline {
        if watchLines().dropFirst(skipping).contains(where: { $0.contains(needle) }) {
          return true
        }
        try await Task.sleep(for: .milliseconds(50))
      }
      return false
    }
    #expect(
      try await awaitWatch(#""path":"satisfied""#, skipping: 0), "the watcher saw the path")

    let beforeDown = watchLines().count - 1
    try await shell(["ip", "-n", a, "link", "set", "va", "down"])
    #expect(
      try await awaitWatch(#""online":false"#, skipping: beforeDown),
      "the watcher saw the link go down")
    var ids: [String] = []
    for title in ["un", "deux", "trois"] {
      let add = try await shell(
        courier + ["--max-attempts", "1", "--json", "articles", "add", "--title", title])
      try #require(add.succeeded, "queued offline: \(add)")
      let object = try JSONSerialization.jsonObject(with: Data(add.stdout.utf8)) as? [String: Any]
      ids.append(object?["id"] as? String ?? "")
    }
    let before = try await curl("/__log")
    #expect(!before.contains("PUT"), "nothing reached the server while the link was down")

    try await shell(["ip", "-n", a, "link", "set", "va", "up"])
    try await shell(["ip", "-n", a, "route", "add", "default", "via", "10.79.0.2", "dev", "va"])
    var puts: [String] = []
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline, puts.count < 3 {
      try await Task.sleep(for: .milliseconds(100))
      let log = try JSONSerialization.jsonObject(with: Data(try await curl("/__log").utf8))
      let entries = (log as? [[String: Any]]) ?? []
      puts = entries.filter { $0["method"] as? String == "PUT" && ($0["status"] as? Int) == 201 }
        .compactMap { ($0["path"] as? String)?.split(separator: "/").last.map(String.init) }
    }
    #expect(
      puts == ids,
      """
      sent in the order written, by the watcher alone; its output: \(watchLines()); \
      its errors: \((try? String(contentsOf: watchErrors, encoding: .utf8)) ?? "")
      """)
    kill(watch.processIdentifier, SIGTERM)
    try #require(await watch.exited(within: .seconds(60)), "SIGTERM ends the watch")
    #expect(watch.terminationStatus == 0, "SIGTERM ends the watch cleanly")
  }
}
