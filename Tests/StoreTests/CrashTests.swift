import CourierDomain
import CourierPorts
import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Kills a writing process with SIGKILL at random points, many times, and checks after each
/// reopen that every write it reported as returned is there, in order, once, and nothing is
/// damaged.
@Suite("Crash durability")
struct CrashTests {
  static let rounds = 20

  /// The probe executable, built next to the test bundle.
  static var probe: URL? {
    guard let test = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    else { return nil }
    let url = URL(fileURLWithPath: test).deletingLastPathComponent()
      .appendingPathComponent("courier-store-crash-probe")
    return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
  }

  /// Runs the probe from operation `start` until it has reported `target` operations (or
  /// exited), then kills it. Returns what it reported, and its stderr when it was not killed.
  static func runAndKill(_ probe: URL, adapter: String, directory: String, start: Int, target: Int)
    throws -> (reported: [Int], failure: String?)
  {
    let process = Process()
    process.executableURL = probe
    process.arguments = ["enqueue", adapter, directory, String(start)]
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let pid = process.processIdentifier
    // A watchdog, so a hung child fails the test instead of hanging it.
    let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
    DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
    defer { watchdog.cancel() }

    var reported: [Int] = []
    var pending = ""
    while reported.count < target {
      let data = output.fileHandleForReading.availableData
      if data.isEmpty { break }
      pending += String(decoding: data, as: UTF8.self)
      while let newline = pending.firstIndex(of: "\n") {
        if let number = Int(pending[..<newline]) { reported.append(number) }
        pending = String(pending[pending.index(after: newline)...])
      }
    }
    kill(pid, SIGKILL)
    process.waitUntilExit()
    if process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGKILL {
      return (reported, nil)
    }
    let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return (reported, "exit \(process.terminationStatus): \(stderr)")
  }

  @Test(
    "every reported enqueue survives kill -9, in order, without duplicates",
    arguments: ["sqlite", "sqlite-kept", "file"])
  func killNine(adapter: String) async throws {
    // Twenty child processes, each read until killed: off the concurrency pool.
    try await offPool { try Self.killNine(adapter: adapter) }
  }

  static func killNine(adapter: String) throws {
    let probe = try #require(
      Self.probe, "build the probe first: swift build --product courier-store-crash-probe")
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let open: StoreAdapter =
      switch adapter {
      case "sqlite": .sqlite
      case "sqlite-kept": .sqliteKept
      default: .file
      }
    var onDisk = 0
    var killedMidway = 0
    // The targets are seeded (the kills' timing stays the machine's); each message names the
    // seed and round, to replay the same targets (Docs/testing.md).
    var generator = SplitMix64(testSeed: 0xC4A5_4001)
    for index in 0..<Self.rounds {
      let target = Int.random(in: 1...30, using: &generator)
      let round = "\(index) (\(generator.seedDescription), target \(target))"
      let (reported, failure) = try Self.runAndKill(
        probe, adapter: adapter, directory: directory.path, start: onDisk, target: target)
      #expect(failure == nil, "round \(round): the probe failed on its own: \(failure ?? "")")
      #expect(reported == Array(onDisk..<(onDisk + reported.count)), "round \(round)")

      let store = try open.open(directory.path)
      defer { open.close(store) }
      let entries = try store.entries()
      let count = entries.count
      // Every reported operation is there; at most the one in flight beyond them.
      let lastReported = reported.last.map { $0 + 1 } ?? onDisk
      #expect(count >= lastReported, "round \(round): lost reported enqueues")
      #expect(entries.map(\.id) == (0..<count).map(Fixture.operationID), "round \(round)")
      #expect(
        zip(entries, entries.dropFirst()).allSatisfy { $0.sequence < $1.sequence }, "round \(round)"
      )
      let records = try store.records(in: "articles")
      #expect(records.count == count, "round \(round): record and entry disagree")
      #expect(Set(records.map(\.key.id)) == Set((0..<count).map { "r\($0)" }), "round \(round)")
      if count > lastReported { killedMidway += 1 }
      onDisk = count
    }
    #expect(onDisk > Self.rounds, "\(generator.seedDescription)")
    print(
      "\(adapter): \(onDisk) operations over \(Self.rounds) kills, \(killedMidway) found past the last report"
    )
  }
}
