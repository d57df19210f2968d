import CourierDomain
import CourierPorts
import Foundation
import Synchronization
import Testing

/// A path monitor under test and the means to change the path it watches.
public struct PathMonitorHarness: Sendable {
  /// The monitor (not running yet).
  public var monitor: any PathMonitor
  /// Makes the watched path `satisfied` or `unsatisfied` (a real link, or a played event).
  public var drive: @Sendable (PathStatus) async throws -> Void
  /// Releases what the harness made (namespaces...).
  public var close: @Sendable () -> Void

  /// Creates a harness.
  /// - Parameters:
  ///   - monitor: the monitor, not running.
  ///   - drive: changes the path.
  ///   - close: cleans up.
  public init(
    monitor: any PathMonitor, drive: @escaping @Sendable (PathStatus) async throws -> Void,
    close: @escaping @Sendable () -> Void = {}
  ) {
    self.monitor = monitor
    self.drive = drive
    self.close = close
  }
}

/// Makes a fresh harness for one check.
public typealias PathMonitorFactory = @Sendable () async throws -> PathMonitorHarness

/// What every adapter of the `PathMonitor` port must do (the port's documentation, as checks):
/// an adapter's tests run each check with a factory of its own.
public struct PathMonitorContract: Sendable, CustomStringConvertible {
  /// The check's name.
  public let name: String
  let body: @Sendable (PathMonitorHarness) async throws -> Void

  /// The check's name.
  public var description: String { name }

  /// Runs the check on a fresh harness, closing it afterwards.
  /// - Parameter factory: makes the harness.
  /// - Throws: what the check throws.
  public func run(_ factory: PathMonitorFactory) async throws {
    let harness = try await factory()
    defer { harness.close() }
    try await body(harness)
  }

  /// Every check.
  public static let all: [PathMonitorContract] = [
    unknownFirst, currentFirstThenChanges, everyConsumerEveryChange, slowConsumerNewest,
    cancellation,
  ]

  static let unknownFirst = PathMonitorContract(
    name: "before it has heard anything: unknown, and a stream starts with unknown"
  ) { harness in
    #expect(harness.monitor.currentPath.status == .unknown)
    let first = try await PathLog(harness.monitor.updates()).wait("the first path") { _ in true }
    #expect(first.status == .unknown)
  }

  static let currentFirstThenChanges = PathMonitorContract(
    name: "each stream starts with the current path, then follows every change"
  ) { harness in
    try await running(harness) { monitor in
      try await harness.drive(.satisfied)
      try await PathLog(monitor.updates()).wait("satisfied") { $0.status == .satisfied }
      let late = PathLog(monitor.updates())
      let first = try await late.wait("the late stream's first path") { _ in true }
      #expect(first.status == .satisfied)
      #expect(first.generation == monitor.currentPath.generation)
      try await harness.drive(.unsatisfied)
      try await late.wait("unsatisfied") { $0.status == .unsatisfied }
      try await harness.drive(.satisfied)
      try await late.wait("satisfied again") { $0.status == .satisfied }
      #expect(late.statuses.first == .satisfied)
      #expect(late.statusChanges == [.satisfied, .unsatisfied, .satisfied])
    }
  }

  static let everyConsumerEveryChange = PathMonitorContract(
    name: "several consumers at once each get every change"
  ) { harness in
    try await running(harness) { monitor in
      try await harness.drive(.satisfied)
      // Subscribed once the monitor has seen it, so each stream starts with satisfied.
      try await PathLog(monitor.updates()).wait("satisfied") { $0.status == .satisfied }
      let logs = (0..<3).map { _ in PathLog(monitor.updates()) }
      for log in logs { try await log.wait("satisfied") { $0.status == .satisfied } }
      try await harness.drive(.unsatisfied)
      for log in logs { try await log.wait("unsatisfied") { $0.status == .unsatisfied } }
      try await harness.drive(.satisfied)
      for log in logs {
        try await log.wait("satisfied again") { $0.status == .satisfied }
        #expect(log.statusChanges == [.satisfied, .unsatisfied, .satisfied])
      }
    }
  }

  static let slowConsumerNewest = PathMonitorContract(
    name: "a consumer that reads late gets the newest path, not a backlog"
  ) { harness in
    try await running(harness) { monitor in
      let slow = monitor.updates()  // not read until the end
      let watcher = PathLog(monitor.updates())
      try await harness.drive(.satisfied)
      try await watcher.wait("satisfied") { $0.status == .satisfied }
      try await harness.drive(.unsatisfied)
      try await watcher.wait("unsatisfied") { $0.status == .unsatisfied }
      try await harness.drive(.satisfied)
      try await watcher.wait("satisfied again") { $0.status == .satisfied }
      let late = PathLog(slow)
      let first = try await late.wait("the slow stream's first path") { _ in true }
      // A backlog would start with unknown (its first value) or unsatisfied.
      #expect(first.status == .satisfied)
    }
  }

  static let cancellation = PathMonitorContract(
    name: "run() returns once its task is cancelled"
  ) { harness in
    let monitor = harness.monitor
    let run = Task { try await monitor.run() }
    try await harness.drive(.satisfied)
    try await PathLog(monitor.updates()).wait("satisfied") { $0.status == .satisfied }
    run.cancel()
    // A bound against a hang, not a speed test: a loaded machine may take seconds to resume.
    let ended = try await withThrowingTaskGroup(of: Bool.self) { group in
      group.addTask {
        _ = try? await run.value
        return true
      }
      group.addTask {
        try await Task.sleep(for: .seconds(60))
        return false
      }
      defer { group.cancelAll() }
      return try await group.next() ?? false
    }
    #expect(ended, "run() still running 60 s after cancellation")
  }

  /// Runs the monitor around the body, then cancels it and waits for it to end.
  static func running(
    _ harness: PathMonitorHarness, _ body: (any PathMonitor) async throws -> Void
  ) async throws {
    let monitor = harness.monitor
    let run = Task { try await monitor.run() }
    do {
      try await body(monitor)
    } catch {
      run.cancel()
      _ = try? await run.value
      throw error
    }
    run.cancel()
    try await run.value
  }
}

/// Reads a stream in the background and keeps everything it yields, for bounded waits: a
/// wait is woken by each new path, never by polling.
public final class PathLog: Sendable {
  private struct State {
    var paths: [NetworkPath] = []
    var cursor = 0
    var waiter: CheckedContinuation<Void, Never>?
  }
  private final class Box: Sendable {
    let state = Mutex(State())
  }
  private let box = Box()
  private let reader: Task<Void, Never>

  /// Starts reading.
  /// - Parameter stream: a monitor's stream.
  public init(_ stream: AsyncStream<NetworkPath>) {
    let box = self.box
    reader = Task {
      for await path in stream {
        box.state.withLock { state in
          state.paths.append(path)
          state.waiter?.resume()
          state.waiter = nil
        }
      }
    }
  }

  deinit { reader.cancel() }

  /// Everything read so far.
  public var all: [NetworkPath] { box.state.withLock { $0.paths } }

  /// The statuses read so far.
  public var statuses: [PathStatus] { all.map(\.status) }

  /// The statuses with repeats folded (a path may change without its status changing).
  public var statusChanges: [PathStatus] {
    statuses.reduce(into: []) { result, status in
      if result.last != status { result.append(status) }
    }
  }

  /// Waits (bounded) for a path after the one an earlier wait returned.
  /// - Parameters:
  ///   - what: named in the error.
  ///   - limit: how long to wait.
  ///   - predicate: the path wanted.
  /// - Returns: the path.
  /// - Throws: `PathWaitTimedOut` after `limit`.
  @discardableResult
  public func wait(
    _ what: String, within limit: Duration = .seconds(30),
    where predicate: @escaping @Sendable (NetworkPath) -> Bool
  ) async throws -> NetworkPath {
    let box = self.box
    let found = try await withThrowingTaskGroup(of: NetworkPath?.self) { group in
      group.addTask {
        while !Task.isCancelled {
          // One look under the lock: a match, or how many paths were looked at.
          let (match, looked) = box.state.withLock { state -> (NetworkPath?, Int) in
            let unseen = state.paths.indices.dropFirst(state.cursor)
            guard let index = unseen.first(where: { predicate(state.paths[$0]) }) else {
              return (nil, state.paths.count)
            }
            state.cursor = index + 1
            return (state.paths[index], state.paths.count)
          }
          if let match { return match }
          // Sleeps until a path arrives (or the timer below wins and cancels this task).
          await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            box.state.withLock { state in
              if state.paths.count > looked || Task.isCancelled {
                continuation.resume()
              } else {
                state.waiter = continuation
              }
            }
          }
        }
        return nil
      }
      group.addTask {
        try await Task.sleep(for: limit)
        return nil
      }
      let first = try await group.next() ?? nil
      group.cancelAll()
      box.state.withLock { state in
        state.waiter?.resume()
        state.waiter = nil
      }
      return first
    }
    guard let found else { throw PathWaitTimedOut(waitingFor: what, seen: all) }
    return found
  }
}

/// A bounded wait on a path stream that ended without the path wanted.
public struct PathWaitTimedOut: Error, CustomStringConvertible {
  /// What was awaited.
  public var waitingFor: String
  /// What the stream yielded.
  public var seen: [NetworkPath]
  /// A readable account.
  public var description: String {
    "timed out waiting for \(waitingFor); seen: \(seen.map(\.status))"
  }
}
