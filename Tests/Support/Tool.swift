import Foundation

/// Runs a tool and returns its standard output.
package enum Tool {
  package struct Failure: Error, CustomStringConvertible {
    package let command: String
    package let stderr: String
    package var description: String { "\(command) failed: \(stderr)" }
  }

  @discardableResult
  package static func run(_ program: String, _ arguments: [String]) async throws -> String {
    try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global().async {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do {
          try process.run()
          let output = out.fileHandleForReading.readDataToEndOfFile()
          let error = err.fileHandleForReading.readDataToEndOfFile()
          process.waitUntilExit()
          if process.terminationStatus == 0 {
            continuation.resume(returning: String(decoding: output, as: UTF8.self))
          } else {
            continuation.resume(
              throwing: Failure(
                command: ([program] + arguments).joined(separator: " "),
                stderr: String(decoding: error, as: UTF8.self)))
          }
        } catch {
          continuation.resume(throwing: error)
        }
      }
    }
  }
}
