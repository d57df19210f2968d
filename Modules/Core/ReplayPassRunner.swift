import CourierDomain
import CourierPorts

/// Runs one pass of a replayer: feeds `ReplayPass` what the store and the senders did and carries
/// out what it says next, in the caller's task. A window leaves as a child of one task group, so
/// every early end (a stop, a store failure, cancellation) cancels the window in flight and
/// waits for it: no send outlives its pass.
struct ReplayPassRunner {
  let replayer: OutboxReplayer
  /// The path the policy is checked against for the whole pass; nil for the monitor's current
  /// one at each window (`OutboxReplayer.passPath()`).
  let path: NetworkPath?

  /// Runs the pass to its end, then publishes the outbox's counts and the outcome.
  /// - Returns: what the pass did.
  func run() async -> ReplayReport {
    let replayer = replayer
    let store = replayer.store
    let configuration = replayer.configuration
    let sender = ReplayWindowSender(
      store: store, concurrency: configuration.maxConcurrentSends, metrics: replayer.metrics,
      now: replayer.now)
    let settlement = ReplaySettlement(
      store: store, publisher: replayer.publisher, schema: { replayer.schema(of: $0) })
    var pass = ReplayPass(
      concurrency: configuration.maxConcurrentSends, maxWindow: configuration.maxWindow,
      // An entry the path policy holds back waits like one without a route (decision 2610).
      routed: {
        replayer.route(for: $0.key.collection) != nil && replayer.pathWait(for: $0, on: path) == nil
      }
    )
    let report = await withTaskGroup(
      of: ([ReplayOutcome], ReplayWindow.Halt?).self, returning: ReplayReport.self
    ) { group in
      var action = pass.start()
      while true {
        switch action {
        case .read:
          if Task.isCancelled {
            action = pass.cancelled()
          } else {
            do {
              action = pass.read(try store.entries())
            } catch {
              action = pass.failed(Self.error(error, "reading the outbox"))
            }
          }
        case .count(let picks):
          if Task.isCancelled {
            action = pass.cancelled()
            continue
          }
          // A newer write of a record supersedes its earlier refused ones.
          for id in picks.flatMap(\.superseded) { try? store.remove(id) }
          do {
            action = pass.counted(try store.recordAttempts(picks.map(\.entry)))
          } catch {
            action = pass.failed(Self.error(error, "counting send attempts"))
          }
        case .send(let entries, let resends):
          if Task.isCancelled {
            action = pass.cancelled()
            continue
          }
          let window = entries.compactMap { entry in
            replayer.route(for: entry.key.collection).map { (entry, $0) }
          }
          group.addTask { await sender.send(window, resends: resends) }
          action = pass.launched()
        case .awaitAnswers:
          if let (outcomes, halt) = await group.next() {
            action = pass.answered(outcomes, halt: halt)
          } else {
            action = pass.cancelled()
          }
        case .complete(let completions, let delivered):
          do {
            action = pass.completed(try settlement.complete(completions, delivered: delivered))
          } catch {
            action = pass.failed(Self.error(error, "recording \(completions.count) completions"))
          }
        case .record(let outcome):
          do {
            action = pass.recorded(try settlement.record(outcome))
          } catch {
            action = pass.failed(Self.error(error, "recording the outcome of \(outcome.entry.key)"))
          }
        case .probe(let outcome):
          // Only a sender that can read its record can show the server answers; without one
          // the entry stays pending and the pass stops with its failure, as before parking
          // (decision 2401).
          let entry = outcome.entry
          if Task.isCancelled {
            action = pass.cancelled()
          } else if let prober = replayer.route(for: entry.key.collection)?.sender
            as? any ReplayProbing
          {
            action = pass.probed(await prober.probe(entry))
          } else if case .park(let error) = outcome.step {
            action = pass.probed(error)
          } else {
            action = pass.probed(CourierError(.unexpected, context: "probing \(entry.key)"))
          }
        case .finish(let report):
          group.cancelAll()
          return report
        }
      }
    }
    return finish(report)
  }

  /// Publishes the outbox as the pass left it, and its outcome.
  private func finish(_ report: ReplayReport) -> ReplayReport {
    var report = report
    let store = replayer.store
    let finished = replayer.now()
    replayer.publisher.update { state in
      // The counts alone when nothing is refused or conflicted: no entry to decode.
      if let counts = try? store.counts(), counts.rejected == 0, counts.conflicted == 0 {
        report.pending = counts.pending
        state.pendingCount = counts.pending
        state.rejected = []
        state.conflicted = []
      } else {
        let entries = (try? store.entries()) ?? []
        report.pending = entries.filter { $0.state.isPending }.count
        OutboxReplayer.count(entries, into: &state)
      }
      if let error = report.stoppedBy {
        state.lastError = error
      } else {
        state.lastError = nil
        state.lastSyncAt = finished
      }
    }
    return report
  }

  private static func error(_ error: any Error, _ context: String) -> CourierError {
    OutboxReplayer.courierError(error, context: context)
  }
}
