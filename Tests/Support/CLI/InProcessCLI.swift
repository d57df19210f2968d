import CourierCLI
import CourierTestSupport
import Foundation
import Testing

/// One `courier` command run in-process, as a person would type it.
package struct CLIRun {
  /// The exit status.
  package let code: Int32
  /// What it printed.
  package let output: CapturedOutput

  /// A run that ended with `code` having printed `output`.
  package init(code: Int32, output: CapturedOutput) {
    self.code = code
    self.output = output
  }

  /// Standard output's lines that are JSON objects (the `--json` forms).
  package var lines: [[String: Any]] {
    output.stdout.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
  }
}

/// Runs the CLI in-process against a base URL, with its own home, config and data folder.
package enum InProcessCLI {
  /// Runs one command.
  /// - Parameters:
  ///   - baseURL: the server.
  ///   - arguments: the command and its flags (after the global ones).
  ///   - dataDir: home, config (`cfg/`) and data folder of this client.
  ///   - input: standard input.
  ///   - environment: variables added to (or replacing) the defaults.
  ///   - globalFlags: flags put before `arguments`.
  /// - Returns: the exit status and the output.
  package static func run(
    _ baseURL: String, _ arguments: [String], dataDir: URL, input: String? = nil,
    environment: [String: String] = [:], globalFlags: [String] = []
  ) async -> CLIRun {
    let output = CapturedOutput(input: input)
    var env = ["HOME": dataDir.path, "XDG_CONFIG_HOME": dataDir.appendingPathComponent("cfg").path]
    for (key, value) in environment { env[key] = value }
    let runner = CommandRunner(environment: env, output: output)
    let code = await runner.run(
      ["--base-url", baseURL, "--data-dir", dataDir.path] + globalFlags + arguments)
    return CLIRun(code: code, output: output)
  }

  /// The debug `courier` executable, for tests that must run (and kill) a real process.
  /// - Returns: its URL.
  /// - Throws: when it has not been built.
  package static func builtCourier() throws -> URL {
    let binary = ReferenceBackend.repositoryRoot.appendingPathComponent(".build/debug/courier")
    try #require(
      FileManager.default.isExecutableFile(atPath: binary.path),
      "build courier first: \(binary.path)")
    return binary
  }

  /// A new empty folder under the temporary directory; the caller removes it.
  /// - Parameter prefix: the folder name's start.
  /// - Returns: its URL.
  package static func temporaryDirectory(_ prefix: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID())")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }
}
