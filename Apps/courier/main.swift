import CourierCLI
import CourierSignals
import Foundation

#if canImport(Glibc)
  import Glibc

  /// glibc's `mallopt` (malloc.h, which the Glibc module does not export).
  @_silgen_name("mallopt") func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
  /// malloc.h's `M_TOP_PAD`.
  let mallocTopPad: Int32 = -2
#endif

// Before any thread starts: a parent may have blocked them, and `kill` must stop us.
SignalPipe.unblockTerminationSignals()
#if canImport(Glibc)
  // The commands run on a concurrency thread, whose malloc arena grows its heap a page range
  // at a time with mprotect: 2,400 calls to list 10,000 cached articles. Growing by 16 MiB
  // steps (address space only: untouched pages cost no memory) leaves a handful.
  _ = mallopt(mallocTopPad, 16 << 20)
#endif

let environment = ProcessInfo.processInfo.environment
let runner = CommandRunner(
  environment: environment, output: StandardOutput(environment: environment))
let code = await runner.run(Array(CommandLine.arguments.dropFirst()))
exit(code)
