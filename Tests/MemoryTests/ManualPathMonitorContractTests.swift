import CourierDomain
import CourierTestKit
import CourierTestSupport
import Testing

/// The shipped fake keeps the same promises as the real monitors, so code tested against it
/// sees what it will see in production; then, after each check, every `run()` it started has
/// returned and the published path carries the current generation.
@Suite("ManualPathMonitor passes the path monitor contract")
struct ManualPathMonitorContractTests {
  @Test(arguments: PathMonitorContract.all)
  func contract(_ check: PathMonitorContract) async throws {
    let monitor = ManualPathMonitor()
    try await check.run { PathMonitorHarness(monitor: monitor, drive: { monitor.send($0) }) }
    #expect(monitor.runCount.active == 0)
    #expect(monitor.currentPath.generation == monitor.generation)
  }
}
