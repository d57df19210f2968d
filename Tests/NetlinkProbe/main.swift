// courier-netlink-probe: drives NetlinkPathMonitor for Benchmarks/netlink/run.sh.
//
//   watch [NETNS]                 print each published path (JSON, then details)
//   latency NETNS PEERNS COUNT    toggle the default route COUNT times and the peer's carrier
//                                 COUNT/10 times; print the latency from `ip` returning to the
//                                 monitor publishing, and to `ip monitor` printing, per toggle
//   resync REPEATS                time full snapshots (dumps + rule) in the current namespace
import CourierDomain
import CourierNetlink
import Foundation
import Synchronization

func nanoseconds() -> Int64 {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// Runs a program and waits for it with waitpid, so the time it returns is exact.
func spawn(_ arguments: [String], quiet: Bool = true) -> Int32 {
  var pid: pid_t = 0
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  if quiet { posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) }
  let argv = arguments.map { strdup($0) } + [nil]
  defer { argv.forEach { free($0) } }
  guard posix_spawn(&pid, arguments[0], &actions, nil, argv, environ) == 0 else { return -1 }
  var status: Int32 = 0
  waitpid(pid, &status, 0)
  return status
}

/// Timestamps of events, and a semaphore per arrival.
final class Arrivals: Sendable {
  private let events = Mutex<[(Int64, String)]>([])
  private let signal = DispatchSemaphore(value: 0)
  func record(_ what: String) {
    let now = nanoseconds()
    events.withLock { $0.append((now, what)) }
    signal.signal()
  }
  /// The first event after `time` matching, waiting up to 5 s.
  func first(after time: Int64, matching: (String) -> Bool) -> Int64? {
    let deadline = DispatchTime.now() + 5
    while true {
      if let hit = events.withLock({ $0.first { $0.0 > time && matching($0.1) } }) { return hit.0 }
      if signal.wait(timeout: deadline) == .timedOut { return nil }
    }
  }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return .nan }
  let rank = Int((p / 100 * Double(sorted.count - 1)).rounded())
  return sorted[rank]
}

func report(
  _ name: String, samples: [(spawned: Int64, returned: Int64, ours: Int64, theirs: Int64)]
) {
  func line(_ label: String, _ values: [Double]) -> String {
    String(
      format: "  %@ p50 %8.3f ms  p99 %8.3f ms", label, percentile(values, 50),
      percentile(values, 99))
  }
  let ms = { (delta: Int64) in Double(delta) / 1e6 }
  let oursFromReturn = samples.map { ms($0.ours - $0.returned) }
  let theirsFromReturn = samples.map { ms($0.theirs - $0.returned) }
  let oursFromSpawn = samples.map { ms($0.ours - $0.spawned) }
  let theirsFromSpawn = samples.map { ms($0.theirs - $0.spawned) }
  let difference = samples.map { ms($0.ours - $0.theirs) }
  print("\(name): n=\(samples.count) (negative = before `ip` exited)")
  print(line("monitor    after ip returned    ", oursFromReturn))
  print(line("ip monitor after ip returned    ", theirsFromReturn))
  print(line("monitor    after ip was spawned ", oursFromSpawn))
  print(line("ip monitor after ip was spawned ", theirsFromSpawn))
  print(line("monitor minus ip monitor        ", difference))
  print(
    String(
      format: "  ratio monitor / ip monitor, from spawn: p50 %.3f  p99 %.3f",
      percentile(oursFromSpawn, 50) / percentile(theirsFromSpawn, 50),
      percentile(oursFromSpawn, 99) / percentile(theirsFromSpawn, 99)))
}

func latency(namespace: String, peer: String, count: Int) {
  let monitor = NetlinkPathMonitor(options: .init(namespacePath: "/var/run/netns/\(namespace)"))
  let published = Arrivals()
  let printed = Arrivals()
  let run = Task { try await monitor.run() }
  let watcher = Task {
    for await path in monitor.updates() { published.record(path.status.rawValue) }
  }
  // The reference observer, reading `ip monitor` line by line as it prints them.
  let observer = Process()
  observer.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
  observer.arguments = ["-n", namespace, "monitor", "link", "address", "route"]
  let pipe = Pipe()
  observer.standardOutput = pipe
  do { try observer.run() } catch {
    print("cannot start ip monitor: \(error)")
    exit(1)
  }
  let reader = Thread {
    let handle = pipe.fileHandleForReading
    var pending = Data()
    while true {
      let chunk = handle.availableData
      if chunk.isEmpty { return }
      pending.append(chunk)
      while let newline = pending.firstIndex(of: 10) {
        let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
        pending.removeSubrange(pending.startIndex...newline)
        printed.record(line)
      }
    }
  }
  reader.start()
  guard published.first(after: 0, matching: { $0 == "unsatisfied" }) != nil else {
    print("the monitor never published its first snapshot")
    exit(1)
  }
  let ipPath = "/usr/sbin/ip"
  let addRoute = [ipPath, "-n", namespace, "route", "add", "default", "via", "10.77.0.2"]
  let deleteRoute = [ipPath, "-n", namespace, "route", "del", "default"]
  typealias Toggle = (command: [String], expected: String, line: @Sendable (String) -> Bool)
  /// Runs one toggle; nil when either observer did not see it within 5 s.
  func measure(_ toggle: Toggle) -> (Int64, Int64, Int64, Int64)? {
    let spawned = nanoseconds()
    guard spawn(toggle.command) == 0 else { return nil }
    let returned = nanoseconds()
    guard let ours = published.first(after: spawned, matching: { $0 == toggle.expected }),
      let theirs = printed.first(after: spawned, matching: toggle.line)
    else { return nil }
    return (spawned, returned, ours, theirs)
  }
  // Warm-up: va's carrier arrives through the kernel's linkwatch up to a second after it was
  // set up; a first add/del pair waits for it and is not counted.
  // Each observer must see the toggle itself, not a late echo of the previous one.
  let added: @Sendable (String) -> Bool = { $0.hasPrefix("default") }
  let deleted: @Sendable (String) -> Bool = { $0.hasPrefix("Deleted default") }
  guard measure((addRoute, "satisfied", added)) != nil,
    measure((deleteRoute, "unsatisfied", deleted)) != nil
  else {
    print("warm-up failed")
    exit(1)
  }
  var routeSamples: [(spawned: Int64, returned: Int64, ours: Int64, theirs: Int64)] = []
  for index in 0..<count {
    let add = index % 2 == 0
    guard
      let sample = measure(
        (add ? addRoute : deleteRoute, add ? "satisfied" : "unsatisfied", add ? added : deleted))
    else {
      print("timed out on route toggle \(index)")
      exit(1)
    }
    routeSamples.append(sample)
  }
  report("default route add/del", samples: routeSamples)
  if count % 2 == 0 {
    guard measure((addRoute, "satisfied", added)) != nil else {
      print("could not put the route back")
      exit(1)
    }
  }
  var carrierSamples: [(spawned: Int64, returned: Int64, ours: Int64, theirs: Int64)] = []
  for index in 0..<max(2, count / 10) {
    let down = index % 2 == 0
    let command = [ipPath, "-n", peer, "link", "set", "vb", down ? "down" : "up"]
    guard
      let sample = measure(
        (
          command, down ? "unsatisfied" : "satisfied",
          { $0.contains("va@") && $0.contains(down ? "NO-CARRIER" : "LOWER_UP") }
        ))
    else {
      print("timed out on carrier toggle \(index)")
      exit(1)
    }
    carrierSamples.append(sample)
  }
  report("peer carrier down/up (kernel linkwatch delays carrier events)", samples: carrierSamples)
  observer.terminate()
  run.cancel()
  watcher.cancel()
  print("statistics: \(monitor.statistics)")
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "watch":
  let namespace = arguments.count > 1 ? "/var/run/netns/\(arguments[1])" : nil
  let monitor = NetlinkPathMonitor(options: .init(namespacePath: namespace))
  let task = Task { try await monitor.run() }
  for await path in monitor.updates() {
    print(PathReport.json(path, at: Date()))
    print(PathReport.details(path))
    fflush(nil)
  }
  task.cancel()
case "latency" where arguments.count == 4:
  latency(namespace: arguments[1], peer: arguments[2], count: Int(arguments[3]) ?? 200)
case "resync" where arguments.count == 2:
  do {
    let (durations, path) = try NetlinkPathMonitor.timeSnapshots(repeats: Int(arguments[1]) ?? 50)
    let ms = durations.map {
      Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1e3
    }
    let addresses = path.interfaces.reduce(0) { $0 + $1.addresses.count }
    print(
      "resync (monitor: dump links+addresses+routes, parse, evaluate): n=\(ms.count) "
        + "p50 \(String(format: "%.3f", percentile(ms, 50))) ms "
        + "p99 \(String(format: "%.3f", percentile(ms, 99))) ms (usable addresses seen: \(addresses))"
    )
    // The peer: iproute2 dumping and printing the same tables, many times in one process so
    // fork/exec is amortised, and once per process as a user would run it.
    let repeats = ms.count
    let batch = "/tmp/courier-netlink-resync-\(getpid()).txt"
    let lines = Array(repeating: "address show\nroute show table all", count: repeats)
    try lines.joined(separator: "\n").write(toFile: batch, atomically: true, encoding: .utf8)
    defer { unlink(batch) }
    let start = nanoseconds()
    guard spawn(["/usr/sbin/ip", "-batch", batch]) == 0 else {
      print("ip -batch failed")
      exit(1)
    }
    let batched = Double(nanoseconds() - start) / 1e6 / Double(repeats)
    var single: [Double] = []
    for _ in 0..<repeats {
      let begin = nanoseconds()
      _ = spawn(["/usr/sbin/ip", "address", "show"])
      _ = spawn(["/usr/sbin/ip", "route", "show", "table", "all"])
      single.append(Double(nanoseconds() - begin) / 1e6)
    }
    let p50 = percentile(ms, 50)
    print(
      "resync (ip address show + ip route show table all, in one ip -batch): mean "
        + "\(String(format: "%.3f", batched)) ms per pair; ratio monitor p50 / ip "
        + "\(String(format: "%.3f", p50 / batched))")
    print(
      "resync (the same as two ip processes): p50 \(String(format: "%.3f", percentile(single, 50))) ms "
        + "p99 \(String(format: "%.3f", percentile(single, 99))) ms; ratio monitor p50 / ip p50 "
        + "\(String(format: "%.3f", p50 / percentile(single, 50)))")
  } catch {
    print("resync failed: \(error)")
    exit(1)
  }
default:
  FileHandle.standardError.write(
    Data(
      "usage: courier-netlink-probe watch [NETNS] | latency NETNS PEERNS COUNT | resync N\n".utf8))
  exit(64)
}
