import CourierCLI
import CourierSignals
import Dispatch

#if canImport(Glibc)
  import Glibc
#endif

// Before any thread starts: a parent may have blocked them, and `kill` must stop us.
SignalPipe.unblockTerminationSignals()

let environment = ProcessEnvironment.current()
let runner = CommandRunner(
  environment: environment, output: StandardOutput(environment: environment))
switch runner.start(Array(CommandLine.arguments.dropFirst())) {
case .finished(let code):
  // --help, --version, completions, the man page, usage errors: no task, no thread.
  exit(code)
case .run(let invocation):
  // No top-level `await`: an async main would start every command, even `--version`, by
  // parking the main thread in dispatch_main (a forced unwind of its stack, issue 14). The
  // command runs as a task on the concurrency pool; the main thread only waits for its end.
  let done = DispatchSemaphore(value: 0)
  Task.detached {
    let code = await runner.run(invocation).rawValue
    exit(code)
  }
  done.wait()
}
