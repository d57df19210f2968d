import CourierCore
import CourierDomain
import CourierLinux
import CourierPorts
import CourierSignals
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

/// `courier sync [--watch]`: the session's `sync()` (every collection's writes and the queued
/// uploads) once, or its `watch()` until a signal.
enum SyncCommands {
  static func sync(watch: Bool, context: CommandContext) async throws -> ExitCode {
    let outbox = try context.openOutbox()
    if watch { return await watchLoop(context: context) }
    let report: ReplayReport
    // ISSUE-13: queued uploads show the bar and events of `courier upload` while sent.
    let uploads = QueuedUploadFollower.start(context)
    do {
      report = try await context.session.sync()
    } catch {
      await uploads.stop()
      if let busy = error as? SyncInProgressError { return Self.busy(busy, context: context) }
      throw error
    }
    await uploads.stop()
    let state = outbox.state
    if context.global.json {
      var object = OutboxText.reportObject(report)
      object["rejected_entries"] = .array(
        state.rejected.map { OutboxText.entryObject($0, now: Date()) })
      object["conflicted_entries"] = .array(
        state.conflicted.map { OutboxText.entryObject($0, now: Date()) })
      object["parked_entries"] = .array(
        state.parked.map { OutboxText.entryObject($0, now: Date(), wait: .parked) })
      if let error = report.stoppedBy {
        object["error"] = .object(CommandContext.failureObject(error))
      }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      context.output.out(OutboxText.reportLine(report))
      OutboxText.show(
        state.rejected + state.conflicted + state.parked, after: report, stopped: "stopped",
        context: context)
    }
    if let error = report.stoppedBy { return ExitCode.forError(error) }
    if report.rejected > 0 || report.conflictsKept > 0 { return .businessRefusal }
    // A parked write: the server answered, but its replies to it never proved it (2401).
    return report.parked > 0 ? .protocolError : .success
  }

  /// Reports that another process is syncing this data directory: exit 75 (EX_TEMPFAIL).
  static func busy(_ busy: SyncInProgressError, context: CommandContext) -> ExitCode {
    let holder = busy.holder
    let message =
      "\(busy.description); nothing was sent by this one. Try again when it has finished."
    if context.global.json {
      var object: [String: JSONValue] = [
        "status": .string("failed"), "kind": .string("busy"), "code": .string("sync_in_progress"),
        "message": .string(message), "attempts": .integer(0),
      ]
      if let pid = holder.pid { object["holder_pid"] = .int(pid) }
      if let activity = holder.activity { object["holder_activity"] = .string(activity) }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      context.output.err("courier: \(message)\n")
    }
    return .transient
  }

  /// Replays the outbox unless another process is syncing this data directory (then the
  /// writes stay saved for it, and who it is is returned instead).
  static func replayIfFree(_ context: CommandContext, activity: String) async throws -> (
    report: ReplayReport, heldBy: SyncLock.Holder?
  ) {
    do {
      return (try await context.session.sync(activity: activity), nil)
    } catch let busy as SyncInProgressError {
      var report = ReplayReport()
      report.pending = try context.openOutbox().state.pendingCount
      return (report, busy.holder)
    }
  }

  /// What ended a watch.
  enum WatchEnd: Sendable {
    case signal
    case busy(SyncInProgressError)
    case failed(String)
  }

  static func watchLoop(context: CommandContext) async -> ExitCode {
    let signals = SignalWaiter([SIGINT, SIGTERM])
    let json = context.global.json
    let output = context.output
    let session = context.session
    let end = await withTaskGroup(of: WatchEnd.self) { group in
      group.addTask {
        do {
          // Another process syncing this folder is waited for, not a reason to end (2426).
          let states = session.watch(activity: "sync --watch") { holder in
            output.out(waitingLine(holder, json: json))
          }
          for try await state in states {
            output.out(stateLine(state, json: json))
          }
          return .failed("the watch ended")
        } catch let busy as SyncInProgressError {
          return .busy(busy)
        } catch {
          return .failed("the path monitor stopped: \(error)")
        }
      }
      group.addTask {
        await signals.wait()
        return .signal
      }
      let end = await group.next() ?? .signal
      group.cancelAll()
      signals.cancel()
      return end
    }
    switch end {
    case .signal: return .success
    case .busy(let busy): return Self.busy(busy, context: context)
    case .failed(let message):
      output.err("courier: \(message)\n")
      return .failure
    }
  }

  /// What `sync --watch` prints while it waits for another process's sync lock: a line for a
  /// person, or one `--json` object (`"status":"waiting"`).
  static func waitingLine(_ holder: SyncLock.Holder, json: Bool) -> String {
    let message =
      "waiting: \(holder.description) is syncing this data folder; this watch starts when it "
      + "has finished."
    guard json else { return message + "\n" }
    var object: [String: JSONValue] = [
      "status": .string("waiting"), "kind": .string("busy"), "code": .string("sync_in_progress"),
      "message": .string(message),
    ]
    if let pid = holder.pid { object["holder_pid"] = .int(pid) }
    if let activity = holder.activity { object["holder_activity"] = .string(activity) }
    return JSONLine.encode(object) + "\n"
  }

  static func stateLine(_ state: SyncState, json: Bool) -> String {
    if json {
      var object: [String: JSONValue] = [
        "path": .string(state.path.rawValue), "online": .bool(state.isOnline),
        "syncing": .bool(state.isSyncing), "pending": .int(state.pendingCount),
        "rejected": .int(state.rejected.count), "conflicted": .int(state.conflicted.count),
        "parked": .int(state.parked.count),
      ]
      if let error = state.lastError {
        object["error"] = .object(CommandContext.failureObject(error))
      }
      return JSONLine.encode(object) + "\n"
    }
    let online = state.isOnline ? "online" : "offline"
    let busy = state.isSyncing ? ", syncing" : ""
    var text =
      "\(online)\(busy): \(state.pendingCount) pending, \(state.rejected.count) refused, "
      + "\(state.conflicted.count) in conflict"
    if !state.parked.isEmpty { text += ", \(state.parked.count) parked" }
    if let error = state.lastError {
      text += " (last error: \(LogText.escaped(error.userMessage)))"
    }
    return text + "\n"
  }
}
