import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Sends one replay window, as `ReplayWindow` says (in order when the concurrency is 1, else up
/// to that many at once; nothing new after an answer that stops the pass or changes the queue),
/// and has `ReplayDecision` decide each answer. It runs on its senders' task executor when they
/// share one (decision 1205): each answer resumes the window there, and the next request is
/// handed over there, with no thread woken; the commits stay in the pass's task. An answer that
/// proves a delivery records its lag from the write's commit (`courier_replay_lag_seconds`,
/// decision 2203), whatever the route's sender.
struct ReplayWindowSender: Sendable {
  /// The store, read only for a merge's base copy.
  let store: any LocalStore
  /// Sends at once.
  let concurrency: Int
  /// Where each delivery's lag is recorded.
  let metrics: CourierMetrics
  /// The wall clock the lag ends on.
  let now: @Sendable () -> Date

  /// Sends the entries, each through its route.
  /// - Parameters:
  ///   - window: the entries, their attempts counted, with their routes.
  ///   - resends: the pass's re-sends per entry so far.
  /// - Returns: each sent entry's outcome, in the order the answers came, and why the window
  ///   stopped sending, if it did.
  func send(_ window: [(OutboxEntry, ReplayRoute)], resends: [UUID: Int]) async -> (
    [ReplayOutcome], ReplayWindow.Halt?
  ) {
    var plan = ReplayWindow(count: window.count, concurrency: concurrency)
    var outcomes: [ReplayOutcome] = []
    func decided(_ index: Int, _ answer: ReplayAnswer) -> [Int] {
      let (entry, route) = window[index]
      if metrics.isEnabled, case .delivered = answer {
        metrics.delivered(committedAt: entry.operation.enqueuedAt, now: now())
      }
      let step = decide(entry, answer: answer, route: route, resends: resends[entry.id, default: 0])
      outcomes.append(ReplayOutcome(entry: entry, answer: answer, step: step))
      return plan.answered(index, step: step, cancelled: Task.isCancelled)
    }
    await withTaskExecutorPreference(Self.sharedExecutor(window.map(\.1.sender))) {
      var leaving = plan.start(cancelled: Task.isCancelled)
      if concurrency == 1 {
        // One at a time in the window's task: no child task per request.
        while let index = leaving.first {
          let (entry, route) = window[index]
          leaving = decided(index, await route.sender.send(entry, progress: nil))
        }
        return
      }
      await withTaskGroup(of: (Int, ReplayAnswer).self) { group in
        func launch(_ indices: [Int]) {
          for index in indices {
            let (entry, route) = window[index]
            group.addTask { (index, await route.sender.send(entry, progress: nil)) }
          }
        }
        launch(leaving)
        while let (index, answer) = await group.next() {
          launch(decided(index, answer))
        }
      }
    }
    return (outcomes, plan.halt)
  }

  /// The task executor every sender names (`ReplaySender.taskExecutor`), or nil when one names
  /// none or two differ.
  static func sharedExecutor(_ senders: [any ReplaySender]) -> (any TaskExecutor)? {
    guard let first = senders.first?.taskExecutor else { return nil }
    let id = ObjectIdentifier(first)
    for sender in senders.dropFirst() {
      guard let other = sender.taskExecutor, ObjectIdentifier(other) == id else { return nil }
    }
    return first
  }

  /// What `ReplayDecision` decides for an answer. The merge needs the copy the write started
  /// from: the operation carries it; an entry written before it did falls back to the record's
  /// server copy (only read for a conflict, so a plain replay costs no extra read).
  private func decide(
    _ entry: OutboxEntry, answer: ReplayAnswer, route: ReplayRoute, resends: Int
  ) -> ReplayStep {
    var base: ServerRecord?
    if route.decision.policy == .merge, entry.operation.basePayload == nil,
      case .failed(let error) = answer, error.kind == .conflict
    {
      base = (try? store.record(entry.key))?.server
    }
    return route.decision.step(for: entry, answer: answer, resends: resends, base: base)
  }
}
