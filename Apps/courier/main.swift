import CourierCLI
import CourierSignals
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

// Before any thread starts: a parent may have blocked them, and `kill` must stop us.
SignalPipe.unblockTerminationSignals()

let environment = ProcessInfo.processInfo.environment
let runner = CommandRunner(
  environment: environment, output: StandardOutput(environment: environment))
let code = await runner.run(Array(CommandLine.arguments.dropFirst()))
exit(code)
