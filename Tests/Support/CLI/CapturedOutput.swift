import CourierCLI
import Synchronization

/// Output captured for assertions: both streams kept in memory, never a terminal.
package final class CapturedOutput: CommandOutput {
  private let state = Mutex((out: "", err: ""))
  /// What standard input holds (`--password-stdin`), nil for none.
  package let input: String?
  /// Creates empty output with `input` on standard input.
  package init(input: String? = nil) { self.input = input }
  package func out(_ text: String) { state.withLock { $0.out += text } }
  package func err(_ text: String) { state.withLock { $0.err += text } }
  package var isTerminal: Bool { false }
  package var useColor: Bool { false }
  package func readStandardInput() -> String? { input }
  /// Everything written to standard output so far.
  package var stdout: String { state.withLock { $0.out } }
  /// Everything written to standard error so far.
  package var stderr: String { state.withLock { $0.err } }
}
