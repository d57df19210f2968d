import Foundation
import Testing

/// python-dbusmock's NetworkManager on a private bus (Tests/Support/nm_mock.py), driven one
/// command at a time: the D-Bus path facts tests and the path policy's end-to-end test.
final class MockNetworkManager {
  let process = Process()
  let input = Pipe()
  var replies: AsyncStream<String>.Iterator
  let address: String

  init() async throws {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Support/nm_mock.py")
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [script.path]
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    replies = lines(of: output.fileHandleForReading).makeAsyncIterator()
    let first = await replies.next() ?? ""
    try #require(first.hasPrefix("address "), "nm_mock.py said “\(first)”")
    address = String(first.dropFirst("address ".count))
  }

  /// Sends a command and waits until the change is on the bus.
  func send(_ command: String) async throws {
    input.fileHandleForWriting.write(Data((command + "\n").utf8))
    let reply = await replies.next()
    try #require(reply == "ok", "\(command): \(reply ?? "no reply")")
  }

  func stop() {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
  }

  /// The test's environment pointed at the mock's bus, without the path facts settings of
  /// the caller's, then `extra`.
  static func environment(bus: String, _ extra: [String: String] = [:]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus
    environment.removeValue(forKey: "COURIER_PATH_FACTS")
    environment.removeValue(forKey: "COURIER_CONSTRAINED_INTERFACES")
    return environment.merging(extra) { $1 }
  }
}
