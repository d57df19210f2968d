import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `courier status` and `courier watch`.
enum PathCommands {
  /// How long `status` waits for the monitor's first answer.
  static let firstAnswerTimeout: Duration = .seconds(3)

  static func status(probing: Bool = true, context: CommandContext) async throws -> ExitCode {
    let monitor = context.environment.pathMonitor
    // Asked once (one netlink dump, no monitor thread); a monitor that cannot answer that way
    // is run until its first answer.
    var path = await monitor.snapshot()
    if path.status == .unknown {
      let runner = Task { try await monitor.run() }
      defer { runner.cancel() }
      path = try await firstKnownPath(of: monitor, runner: runner)
    }
    // Courier's own captive-portal check, once, within the probe's deadline (decision 2607).
    let probe = await StatusProbe.run(on: path, probing: probing, context: context)
    path = PortalCheck.path(path, portal: probe.isPortal)
    if context.global.json {
      context.output.out(PathReport.json(path, at: Date(), probe: probe.json) + "\n")
    } else {
      let details = PathReport.details(path) + "\n" + probe.lines
      context.output.out(details.hasSuffix("\n") ? details : details + "\n")
    }
    return .success
  }

  /// The first path that is not `unknown`, or `unknown` after the timeout (never a failure:
  /// the path is a hint).
  static func firstKnownPath(of monitor: any PathMonitor, runner: Task<Void, any Error>)
    async throws -> NetworkPath
  {
    let first = Task { () -> NetworkPath in
      for await path in monitor.updates() where path.status != .unknown { return path }
      return monitor.currentPath
    }
    let timer = Task {
      try await Task.sleep(for: firstAnswerTimeout)
      first.cancel()
    }
    defer { timer.cancel() }
    let path = await first.value
    if path.status == .unknown, runner.isCancelled == false {
      // The monitor may have failed to start (no netlink here): say why.
      runner.cancel()
      if case .failure(let error) = await runner.result, !(error is CancellationError) {
        throw CourierError(
          .invalidInput,
          serverMessage: "The network path can't be watched here: \(reason(error))",
          underlying: String(describing: error))
      }
    }
    return path
  }

  /// Why a monitor failed, as the error says it: a `CourierError`'s message for a person, or
  /// the error's own description (the netlink monitor's is a sentence with the errno's text).
  /// Not `localizedDescription`: that is corelibs Foundation, and for an error that
  /// is not an `NSError` it said only "The operation could not be completed" and a type name.
  static func reason(_ error: any Error) -> String {
    if let error = error as? CourierError { return error.userMessage }
    return String(describing: error)
  }

  static func watch(context: CommandContext) async throws -> ExitCode {
    let monitor = context.environment.pathMonitor
    let output = context.output
    let json = context.global.json
    let (_, _) = try await Interruptible.run {
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await monitor.run() }
        group.addTask {
          for await path in monitor.updates() {
            let now = Date()
            if json {
              output.out(PathReport.json(path, at: now) + "\n")
            } else {
              output.out(
                "\(PathReport.rfc3339(now))  generation \(path.generation)  "
                  + PathReport.summary(path) + "\n")
            }
          }
        }
        // The monitor ends only by failing or by cancellation; either ends the watch.
        try await group.next()
        group.cancelAll()
      }
    }
    return .success
  }
}
