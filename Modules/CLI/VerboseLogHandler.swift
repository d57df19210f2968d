import CourierDomain
import CourierPorts
import CourierSystem
import Logging

/// `courier --verbose`: the log handler that writes the request pipeline's lines to standard
/// error, `courier: ` then the line, as the command always has (decision 2203). It writes the
/// entries that concern a call, those carrying `courier.request.id`: each exchange (`→`, `←`,
/// `✗`, with header fields redacted) and each retry decision, whatever their level; the
/// library's other entries (replays, path changes) are not part of `--verbose`. Every line is
/// one line: control characters are escaped again here (`LogText`), whoever wrote them.
package struct VerboseLogHandler: LogHandler {
  /// The logger's own metadata (a call's id, once the pipeline set it).
  package var metadata: Logger.Metadata = [:]
  /// Everything reaches the handler, which picks the calls' entries.
  package var logLevel: Logger.Level = .trace
  private let output: any CommandOutput

  /// A handler writing to `output`'s standard error.
  /// - Parameter output: the command's output.
  package init(output: any CommandOutput) {
    self.output = output
  }

  /// The logger for a `--verbose` command.
  /// - Parameter output: the command's output.
  /// - Returns: a logger with this handler.
  package static func logger(writingTo output: any CommandOutput) -> Logger {
    Logger(label: "courier", factory: { _ in VerboseLogHandler(output: output) })
  }

  /// Reads or sets one metadata value.
  package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  /// Writes the entry when it concerns a call.
  /// - Parameter event: the entry.
  package func log(event: LogEvent) {
    guard
      metadata[CourierLogKey.requestID] != nil
        || event.metadata?[CourierLogKey.requestID] != nil
    else { return }
    output.err("courier: " + LogText.escaped("\(event.message)") + "\n")
  }
}
