/// One entry of a replay window after its answer: what came back and what `ReplayDecision`
/// decided. The window's sends produce these; `ReplayPass` settles them.
package struct ReplayOutcome: Sendable, Equatable {
  /// The entry sent, its attempt counted.
  package var entry: OutboxEntry
  /// What came back.
  package var answer: ReplayAnswer
  /// What the decision made of it (or, once recorded, what the store carried out).
  package var step: ReplayStep

  /// Creates an outcome.
  /// - Parameters:
  ///   - entry: the entry sent.
  ///   - answer: what came back.
  ///   - step: the decided step.
  package init(entry: OutboxEntry, answer: ReplayAnswer, step: ReplayStep) {
    self.entry = entry
    self.answer = answer
    self.step = step
  }
}
