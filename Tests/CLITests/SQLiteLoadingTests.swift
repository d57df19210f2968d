import CourierCLITestSupport
import CourierTestSupport
import Foundation
import Testing

/// libsqlite3 is loaded when a command first opens the local store, not at start-up
/// (decision 1401): commands that need no store run without the library, and a command that
/// needs it names the missing library and what to install. Run as real processes, with
/// `COURIER_LIBSQLITE3` naming a file that does not exist (the test process and the debug
/// binary link libsqlite3; the release binary does not list it at all, which
/// `scripts/release-build` checks).
@Suite("libsqlite3 loaded on first use")
struct SQLiteLoadingTests {
  /// Runs `courier` with a fresh home and data folder and libsqlite3 out of reach, off the
  /// concurrency pool (`ChildProcess`).
  static func courier(_ arguments: [String], in folder: URL) async throws -> ChildProcess.Result {
    let binary = try InProcessCLI.builtCourier()
    let environment = [
      "HOME": folder.path, "XDG_CONFIG_HOME": folder.appendingPathComponent("cfg").path,
      "COURIER_DATA_DIR": folder.appendingPathComponent("data").path,
      // A closed port: nothing here may reach a server.
      "COURIER_BASE_URL": "http://127.0.0.1:9",
      "COURIER_LIBSQLITE3": folder.appendingPathComponent("no-such/libsqlite3.so.0").path,
    ]
    return try await ChildProcess.run([binary.path] + arguments, environment: environment)
  }

  @Test("--version, --help and status need no libsqlite3")
  func withoutStore() async throws {
    let folder = try InProcessCLI.temporaryDirectory("courier-nosqlite")
    defer { try? FileManager.default.removeItem(at: folder) }
    for arguments in [["--version"], ["--help"], ["status"]] {
      let run = try await Self.courier(arguments, in: folder)
      #expect(run.succeeded, "\(arguments): \(run)")
      #expect(!run.stdout.isEmpty, "\(arguments)")
    }
  }

  @Test("without libsqlite3 a write is refused naming the library, and nothing is written")
  func missingLibrary() async throws {
    let folder = try InProcessCLI.temporaryDirectory("courier-nosqlite")
    defer { try? FileManager.default.removeItem(at: folder) }
    let run = try await Self.courier(["articles", "add", "--title", "t"], in: folder)
    #expect(run.status == 74 && !run.signaled, "\(run)")
    #expect(run.stderr.contains("libsqlite3"), "\(run.stderr)")
    #expect(run.stderr.contains("apt-get install libsqlite3-0"), "\(run.stderr)")
    let store = folder.appendingPathComponent("data/courier.sqlite").path
    #expect(!FileManager.default.fileExists(atPath: store), "a store was created without SQLite")
  }
}
