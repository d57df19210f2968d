import InMemoryLogging
import Logging

extension Logger {
  /// A logger that keeps every entry, at every level, in swift-log's `InMemoryLogHandler`:
  /// what a test asserts on (decision 2203).
  /// - Parameter level: the least level kept; `trace` by default.
  /// - Returns: the logger and its handler (`entries`).
  package static func recording(level: Logger.Level = .trace) -> (Logger, InMemoryLogHandler) {
    let handler = InMemoryLogHandler()
    var logger = Logger(label: "courier-test", factory: { _ in handler })
    logger.logLevel = level
    return (logger, handler)
  }
}

extension InMemoryLogHandler.Entry {
  /// The message as text.
  package var text: String { message.description }

  /// The value of one metadata key as text, nil when the entry does not carry it.
  /// - Parameter key: the key.
  /// - Returns: its value.
  package func value(_ key: String) -> String? { metadata[key].map { "\($0)" } }
}
