// Prints the network path as Courier's path monitor sees it, then every change until
// interrupted; `--once` prints the first known path (or, after 3 s, what the monitor has) and
// exits; `--debug` has Courier log each change on standard error (swift-log, its `debug` level).
//   path-watcher [--once] [--debug]
// The COURIER_* settings are honoured: COURIER_PATH_MONITOR=manual watches nothing.
import CourierLinux
import Foundation
import Logging

let once = CommandLine.arguments.dropFirst().contains("--once")
// The program's own logger, not the global system's: Courier logs where it is told.
var logger = Logger(label: "path-watcher") { StreamLogHandler.standardError(label: $0) }
logger.logLevel = CommandLine.arguments.dropFirst().contains("--debug") ? .debug : .notice
let courier = try CourierSession.fromEnvironment(logger: logger)

func describe(_ path: NetworkPath) -> String {
  let usable = path.interfaces.filter(\.isUsable).map(\.name)
  let names = usable.isEmpty ? "no usable interface" : usable.joined(separator: ", ")
  return "\(path.status)\(path.isExpensive ? " (expensive)" : ""): \(names)"
}

if once {
  // The path is a hint: wait up to 3 s for a known one, then take what there is.
  let first = await withTaskGroup(of: NetworkPath?.self) { group in
    group.addTask {
      for await path in courier.paths.updates() where path.status != .unknown { return path }
      return nil
    }
    group.addTask {
      try? await Task.sleep(for: .seconds(3))
      return nil
    }
    let first = await group.next() ?? nil
    group.cancelAll()
    return first
  }
  print(describe(first ?? courier.paths.current))
} else {
  // The monitor runs while the stream is iterated.
  for await path in courier.paths.updates() where path.status != .unknown {
    print(describe(path))
  }
}
