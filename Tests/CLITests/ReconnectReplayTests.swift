import CourierTestSupport
import Foundation
import Testing

/// What a command did: its exit status (or the signal that ended it), standard output and
/// standard error.
private struct ShellResult: Sendable, CustomStringConvertible {
  var status: Int32
  var signaled: Bool
  var out: String
  var err: String

  var description: String {
    (signaled ? "killed by signal \(status)" : "exit \(status)")
      + "; stdout: \(out.suffix(2_000)); stderr: \(err.suffix(4_000))"
  }
}

/// Runs a command to the end on a thread of its own (never one of the concurrency pool's two),
/// its standard error in a file so that a crash's report reaches the failure message.
@discardableResult
private func shell(_ arguments: [String], input: String? = nil) async throws -> ShellResult {
  try await offPool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    // A crash of a child prints its backtrace on its standard error, which we keep.
    environment["SWIFT_BACKTRACE"] = "enable=yes,interactive=no"
    process.environment = environment
    let pipe = Pipe()
    process.standardOutput = pipe
    let errFile = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-shell-\(UUID()).err")
    _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errFile) }
    let errHandle = try FileHandle(forWritingTo: errFile)
    defer { try? errHandle.close() }
    process.standardError = errHandle
    let stdin = Pipe()
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try? stdin.fileHandleForWriting.close()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let err = (try? String(contentsOf: errFile, encoding: .utf8)) ?? ""
    return ShellResult(
      status: process.terminationStatus,
      signaled: process.terminationReason == .uncaughtSignal,
      out: String(decoding: data, as: UTF8.self), err: err)
  }
}

/// Removes network namespaces (from a `defer`, which cannot wait asynchronously: `ip netns del`
/// returns at once).
private func deleteNamespaces(_ names: [String]) {
  for name in names {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["ip", "netns", "del", name]
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    guard (try? process.run()) != nil else { continue }
    process.waitUntilExit()
  }
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
      deleteNamespaces([a, b])
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
      try await shell(["ip", "netns", "exec", a, "curl", "-s", "-m", "2", base + path]).out
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

    let courier = [
      "ip", "netns", "exec", a, binary.path, "--base-url", base, "--data-dir", dir.path,
    ]
    let login = try await shell(
      courier + ["login", "--username", "alice", "--password-stdin"], input: "secret\n")
    try #require(login.status == 0 && !login.signaled, "login: \(login)")

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
      try #require(add.status == 0 && !add.signaled, "queued offline: \(add)")
      let object = try JSONSerialization.jsonObject(with: Data(add.out.utf8)) as? [String: Any]
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
