import CourierPorts
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The process's own standard streams.
package struct StandardOutput: CommandOutput {
  /// Whether standard output is a terminal.
  package let isTerminal: Bool
  /// Whether colour may be used.
  package let useColor: Bool

  /// Creates the output, looking at the streams and `NO_COLOR`.
  /// - Parameter environment: the process environment.
  package init(environment: [String: String]) {
    isTerminal = isatty(STDOUT_FILENO) == 1
    useColor = isTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
  }

  /// Writes to standard output.
  /// - Parameter text: the text.
  package func out(_ text: String) { Self.write(text, to: STDOUT_FILENO) }

  /// Writes to standard error.
  /// - Parameter text: the text.
  package func err(_ text: String) { Self.write(text, to: STDERR_FILENO) }

  /// The text's UTF-8 bytes with `write(2)`, straight from the string's storage (no `Data`, no
  /// `FileHandle`), again after a short write or EINTR. A closed pipe or a full disk ends the
  /// write quietly, as a command's output has nowhere else to go.
  static func write(_ text: String, to descriptor: Int32) {
    OpenFile.writeAll(text, to: descriptor)
  }

  /// Reads standard input to its end.
  /// - Returns: the text.
  package func readStandardInput() -> String? {
    let bytes = Self.readToEnd(STDIN_FILENO)
    return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
  }

  /// The bytes of a descriptor up to its end with `read(2)`, again after EINTR (no
  /// `FileHandle`: it is corelibs Foundation, issue 14). Another error (a closed or unreadable
  /// standard input) ends the reading with what was read.
  static func readToEnd(_ descriptor: Int32) -> [UInt8] {
    var bytes: [UInt8] = []
    let chunk = 64 * 1024
    while true {
      let start = bytes.count
      bytes.append(contentsOf: repeatElement(0, count: chunk))
      let count = bytes.withUnsafeMutableBufferPointer { buffer in
        #if canImport(Glibc)
          Glibc.read(descriptor, buffer.baseAddress.map { $0 + start }, chunk)
        #else
          Darwin.read(descriptor, buffer.baseAddress.map { $0 + start }, chunk)
        #endif
      }
      bytes.removeLast(chunk - max(count, 0))
      if count > 0 { continue }
      if count < 0, errno == EINTR { continue }
      return bytes
    }
  }
}
