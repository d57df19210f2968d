// Prints the network path as Courier's path monitor sees it, then every change until
// interrupted; `--once` prints the first known path (or, after 3 s, what the monitor has) and
// exits.
//   path-watcher [--once]
// The COURIER_* settings are honoured: COURIER_PATH_MONITOR=manual watches nothing.
import CourierLinux
import Foundation

let once = CommandLine.arguments.dropFirst().contains("--once")
let environment = try CourierEnvironment(
  config: ConfigLoader.load(
    flags: [:], environment: ProcessInfo.processInfo.environment, readFile: { _ in nil }))
let monitor = environment.pathMonitor

func describe(_ path: NetworkPath) -> String {
  let usable = path.interfaces.filter(\.isUsable).map(\.name)
  let names = usable.isEmpty ? "no usable interface" : usable.joined(separator: ", ")
  return "\(path.status)\(path.isExpensive ? " (expensive)" : ""): \(names)"
}

// The monitor runs in a task of its own until cancelled.
let runner = Task { try await monitor.run() }

if once {
  // The path is a hint: wait up to 3 s for a known one, then take what there is.
  let first = await withTaskGroup(of: NetworkPath?.self) { group in
    group.addTask {
      for await path in monitor.updates() where path.status != .unknown { return path }
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
  runner.cancel()
  if first == nil, case .failure(let error) = await runner.result, !(error is CancellationError) {
    FileHandle.standardError.write(Data("path-watcher: the monitor stopped: \(error)\n".utf8))
    exit(1)
  }
  print(describe(first ?? monitor.currentPath))
} else {
  for await path in monitor.updates() where path.status != .unknown {
    print(describe(path))
  }
}
