import CourierCLI
import CourierSignals

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
  // --help, help, --version, completion scripts, the help dump, usage errors: answered while
  // parsing (swift-argument-parser's parseAsRoot, synchronous), no task, no thread.
  exit(code)
case .run(let invocation):
  // No top-level `await`: an async main would start every command, even `--version`, by
  // parking the main thread in dispatch_main (a forced unwind of its stack, issue 14). The
  // command starts as a task on this thread and, but for `sync` and `watch`, stays here: its
  // jobs and the actors it calls run on this thread (`CallingThreadExecutor`), so a short
  // command starts no thread of the concurrency pool. The closure is `@concurrent`, not the
  // main actor's, whose queue nothing drains.
  let executor = CallingThreadExecutor()
  let preference: (any TaskExecutor)? =
    invocation.runsOnCallingThread ? executor : nil
  Task.immediateDetached(executorPreference: preference) { @concurrent in
    // Ended while the command's session is open: nothing of it is torn down (runAndExit).
    await runner.runAndExit(invocation) { code in
      // _exit, not exit: exit() runs the libraries' atexit handlers and C++ destructors while
      // dispatch and pool threads are still running, and one of those racing a destructor is
      // how a `courier login` that had saved its session died of SIGABRT in CI. Nothing of ours
      // waits for exit(): output went out with write(2), the store is durable at each commit
      // (as after kill -9), temporary files were removed by their owners.
      fflush(nil)
      _exit(code.rawValue)
    }
  }
  // The task ends the process; until then this thread runs its jobs (or, for `sync` and
  // `watch`, only waits).
  executor.run { false }
}
