import CourierCLI
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

// A parent may start us with SIGINT/SIGTERM blocked (a child spawned from a thread of Swift's
// concurrency pool or of libdispatch inherits that thread's blocked mask): `kill` would then
// never stop a watch. Unblock them before any thread starts, so the handlers see them.
var terminationSignals = sigset_t()
sigemptyset(&terminationSignals)
for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&terminationSignals, number) }
sigprocmask(SIG_UNBLOCK, &terminationSignals, nil)

let environment = ProcessInfo.processInfo.environment
let runner = CommandRunner(
  environment: environment, output: StandardOutput(environment: environment))
let code = await runner.run(Array(CommandLine.arguments.dropFirst()))
exit(code)
