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
  public func out(_ text: String) { Self.write(text, to: STDOUT_FILENO) }

  /// Writes to standard error.
  /// - Parameter text: the text.
  public func err(_ text: String) { Self.write(text, to: STDERR_FILENO) }

  /// The text's UTF-8 bytes with `write(2)`, straight from the string's storage (no `Data`, no
  /// `FileHandle`), again after a short write or EINTR. A closed pipe or a full disk ends the
  /// write quietly, as a command's output has nowhere else to go.
  static func write(_ text: String, to descriptor: Int32) {
    var text = text
    text.withUTF8 { bytes in
      guard var next = bytes.baseAddress else { return }
      var left = bytes.count
      while left > 0 {
        #if canImport(Glibc)
          let written = Glibc.write(descriptor, next, left)
        #else
          let written = Darwin.write(descriptor, next, left)
        #endif
        if written < 0 {
          if errno == EINTR { continue }
          return
        }
        next += written
        left -= written
      }
    }
  }

  /// Reads standard input to its end.
  /// - Returns: the text.
  public func readStandardInput() -> String? {
    let data = FileHandle.standardInput.readDataToEndOfFile()
    return data.isEmpty ? nil : String(decoding: data, as: UTF8.self)
  }
}
