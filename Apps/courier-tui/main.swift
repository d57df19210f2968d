// courier-tui: the full-screen terminal interface over the real core (CoreBridge), or over
// labelled demo data with --demo (DemoCore.swift).

import CoreMetrics
import CourierLinux
import CourierSignals
import CourierTUI

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#endif

// Before any thread starts: a parent may have blocked them, and `kill` must stop us.
SignalPipe.unblockTerminationSignals()

func fail(_ message: String, status: Int32) -> Never {
  TUICommand.writeError("courier-tui: \(message)\n")
  exit(status)
}

let environment = ProcessInfo.processInfo.environment
// swift-argument-parser answers --help, --version, --generate-completion-script and
// --experimental-dump-help itself (exit 0), and a usage error with exit 64.
let command = TUICommand.parseOrExit()
let flags = command.flags
let demo = command.demo

// The configuration first, so a bad flag, file or variable is a usage error (64) even
// without a terminal.
var courier: CourierEnvironment?
if !demo {
  do {
    let config = try ConfigLoader.load(flags: flags, environment: environment) { path in
      FileManager.default.fileExists(atPath: path)
        ? try Data(contentsOf: URL(fileURLWithPath: path)) : nil
    }
    // The screen is the terminal's: nothing may log to it, and no metrics backend is bundled
    // (decision 2203).
    courier = try CourierEnvironment(
      config: config, logger: .courierDiscarding, metrics: NOOPMetricsHandler.instance)
  } catch {
    fail("\(error)", status: TUICommand.usageExitCode)
  }
}
guard TerminalSession.isTerminal() else {
  fail(TerminalError.notATerminal.message, status: 1)
}

let actions: any TUIActions
let updates: AsyncStream<TUIUpdate>
let background: Task<Void, Never>
var initialState = TUIState()
if demo {
  let core = DemoCore()
  actions = core
  updates = await core.updates()
  initialState.statusMessage = "Demo data (--demo): nothing is sent anywhere."
  background = Task { await core.simulate() }
} else {
  guard let courier else { fail("no configuration.", status: 1) }
  let hub = UpdateHub()
  let bridge: CoreBridge
  do {
    bridge = try CoreBridge(environment: courier, hub: hub)
  } catch {
    // The store names its file and what is wrong with it.
    fail("\(error)", status: 1)
  }
  actions = bridge
  updates = hub.stream
  initialState = await bridge.initialState()
  background = Task {
    do {
      try await bridge.run()
    } catch is CancellationError {
    } catch {
      hub.send(.status("The core stopped: \(TUIEventLoop.message(for: error))"))
    }
  }
}

let session: TerminalSession
do {
  session = try TerminalSession()
} catch {
  fail("\(error)", status: 1)
}
let loop = TUIEventLoop(
  io: session.io, actions: actions, updates: updates, initialState: initialState,
  colour: ColourPolicy.isEnabled(isTerminal: true, environment: environment))
let result = await loop.run()
background.cancel()
session.restore()
if case .signal(let number) = result {
  // Die of the same signal, so that a calling shell sees why.
  signal(number, SIG_DFL)
  raise(number)
}
// _exit, not exit: the terminal is restored above, and exit()'s library destructors would race
// the threads still running (the bridge's replays, dispatch), as `courier`'s main says.
fflush(nil)
_exit(result.status)
