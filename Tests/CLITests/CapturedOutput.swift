import CourierCLI
import Synchronization

/// Output captured for assertions.
final class CapturedOutput: CommandOutput {
  private let state = Mutex((out: "", err: ""))
  let input: String?
  init(input: String? = nil) { self.input = input }
  func out(_ text: String) { state.withLock { $0.out += text } }
  func err(_ text: String) { state.withLock { $0.err += text } }
  var isTerminal: Bool { false }
  var useColor: Bool { false }
  func readStandardInput() -> String? { input }
  var stdout: String { state.withLock { $0.out } }
  var stderr: String { state.withLock { $0.err } }
}
