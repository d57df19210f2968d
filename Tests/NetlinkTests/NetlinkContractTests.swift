import CourierDomain
import CourierNetlink
import CourierTestSupport
import Testing

/// The `PathMonitor` port's contract against the real kernel: each check gets its own pair of
/// network namespaces, and the path is changed by bringing a veth and its route up or down.
/// After each check the published path carries the monitor's current generation, and no
/// message from anything but the kernel was applied.
@Suite(
  "NetlinkPathMonitor passes the path monitor contract", .serialized, .enabled(if: isRoot),
  .timeLimit(.minutes(1)))
struct NetlinkContractTests {
  @Test(arguments: PathMonitorContract.all)
  func contract(_ check: PathMonitorContract) async throws {
    let pair = try VethPair()
    defer { pair.remove() }
    let monitor = NetlinkPathMonitor(options: .init(namespacePath: pair.path))
    try await check.run {
      PathMonitorHarness(
        monitor: monitor,
        drive: { status in
          switch status {
          case .satisfied:
            try pair.here("addr", "replace", "10.77.0.1/24", "dev", "va")
            try pair.here("link", "set", "va", "up")
            try pair.here("route", "replace", "default", "via", "10.77.0.2", "dev", "va")
          default:
            try pair.here("link", "set", "va", "down")
          }
        })
    }
    #expect(monitor.currentPath.generation == monitor.generation)
    #expect(monitor.statistics.foreignMessages == 0)
  }
}
