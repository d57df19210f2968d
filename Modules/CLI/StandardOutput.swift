import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The process's own standard streams.
public struct StandardOutput: CommandOutput {
  /// Whether standard output is a terminal.
  public let isTerminal: Bool
  /// Whether colour may be used.
  public let useColor: Bool

  /// Creates the output, looking at the streams and `NO_COLOR`.
  /// - Parameter environment: the process environment.
  public init(environment: [String: String]) {
    isTerminal = isatty(STDOUT_FILENO) == 1
    useColor = isTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
  }

  /// Writes to standard output.
  /// - Parameter text: the text.
  public func out(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

  /// Writes to standard error.
  /// - Parameter text: the text.
  public func err(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

  /// Reads standard input to its end.
  /// - Returns: the text.
  public func readStandardInput() -> String? {
    let data = FileHandle.standardInput.readDataToEndOfFile()
    return data.isEmpty ? nil : String(decoding: data, as: UTF8.self)
  }
}
