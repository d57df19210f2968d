// courier-tui: the full-screen terminal interface. Until it is wired to the real core, it runs
// against DemoCore (demo data, see DemoCore.swift).

import CourierTUI
import Foundation

guard TerminalSession.isTerminal() else {
  FileHandle.standardError.write(Data("courier-tui: \(TerminalError.notATerminal.message)\n".utf8))
  exit(1)
}

let demo = DemoCore()
let session: TerminalSession
do {
  session = try TerminalSession()
} catch {
  FileHandle.standardError.write(Data("courier-tui: \(error)\n".utf8))
  exit(1)
}
let loop = TUIEventLoop(
  io: session.io, actions: demo, updates: await demo.updates(),
  initialState: TUIState(statusMessage: "Demo data: not wired to the real core yet."),
  colour: ColourPolicy.isEnabled(
    isTerminal: true, environment: ProcessInfo.processInfo.environment))
let simulation = Task { await demo.simulate() }
let result = await loop.run()
simulation.cancel()
session.restore()
if case .signal(let number) = result {
  // Die of the same signal, so that a calling shell sees why.
  signal(number, SIG_DFL)
  raise(number)
}
exit(result.status)
