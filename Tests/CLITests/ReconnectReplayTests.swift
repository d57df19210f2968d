import CourierTestSupport
import Foundation
import Testing

/// Runs a command to the end and returns its exit status and standard output.
@discardableResult
private func shell(_ arguments: [String], input: String? = nil) throws -> (Int32, String) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = arguments
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = FileHandle(forWritingAtPath: "/dev/null")
  let stdin = Pipe()
  process.standardInput = stdin
  try process.run()
  if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
  try? stdin.fileHandleForWriting.close()
  let data = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: data, as: UTF8.self))
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
      _ = try? shell(["ip", "netns", "del", a])
      _ = try? shell(["ip", "netns", "del", b])
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
      let (status, _) = try shell(command)
      try #require(status == 0, "\(command.joined(separator: " ")) failed")
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
    func curl(_ path: String) throws -> String {
      try shell(["ip", "netns", "exec", a, "curl", "-s", "-m", "2", base + path]).1
    }
    let up = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < up, try !curl("/health").contains("true") {
      try await Task.sleep(for: .milliseconds(200))
    }
    try #require(
      try curl("/health").contains("true"),
      """
      backend did not start in namespace \(b) (running: \(backend.isRunning)): \
      \((try? String(contentsOf: backendLog, encoding: .utf8)) ?? "")
      """)

    let courier = [
      "ip", "netns", "exec", a, binary.path, "--base-url", base, "--data-dir", dir.path,
    ]
    let login = try shell(
      courier + ["login", "--username", "alice", "--password-stdin"], input: "secret\n")
    #expect(login.0 == 0)

    let watchOutput = dir.appendingPathComponent("watch.jsonl")
    _ = FileManager.default.createFile(atPath: watchOutput.path, contents: nil)
    let watch = Process()
    watch.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    watch.arguments = courier + ["sync", "--watch", "--json"]
    watch.environment = [
      "HOME": dir.path, "XDG_CONFIG_HOME": dir.appendingPathComponent("cfg").path,
    ]
    watch.standardOutput = try FileHandle(forWritingTo: watchOutput)
    watch.standardError = FileHandle(forWritingAtPath: "/dev/null")
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
    try shell(["ip", "-n", a, "link", "set", "va", "down"])
    #expect(
      try await awaitWatch(#""online":false"#, skipping: beforeDown),
      "the watcher saw the link go down")
    var ids: [String] = []
    for title in ["un", "deux", "trois"] {
      let (status, out) = try shell(
        courier + ["--max-attempts", "1", "--json", "articles", "add", "--title", title])
      #expect(status == 0, "queued offline: \(out)")
      let object = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
      ids.append(object?["id"] as? String ?? "")
    }
    let before = try curl("/__log")
    #expect(!before.contains("PUT"), "nothing reached the server while the link was down")

    try shell(["ip", "-n", a, "link", "set", "va", "up"])
    try shell(["ip", "-n", a, "route", "add", "default", "via", "10.79.0.2", "dev", "va"])
    var puts: [String] = []
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline, puts.count < 3 {
      try await Task.sleep(for: .milliseconds(100))
      let log = try JSONSerialization.jsonObject(with: Data(try curl("/__log").utf8))
      let entries = (log as? [[String: Any]]) ?? []
      puts = entries.filter { $0["method"] as? String == "PUT" && ($0["status"] as? Int) == 201 }
        .compactMap { ($0["path"] as? String)?.split(separator: "/").last.map(String.init) }
    }
    #expect(puts == ids, "sent in the order written, by the watcher alone")
    kill(watch.processIdentifier, SIGTERM)
    let stop = ContinuousClock.now + .seconds(10)
    while watch.isRunning, ContinuousClock.now < stop {
      try await Task.sleep(for: .milliseconds(20))
    }
    try #require(!watch.isRunning, "SIGTERM ends the watch")
    #expect(watch.terminationStatus == 0, "SIGTERM ends the watch cleanly")
  }
}
