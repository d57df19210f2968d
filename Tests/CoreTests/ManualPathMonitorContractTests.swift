import CourierDomain
import CourierTestKit
import CourierTestSupport
import Testing

/// The shipped fake keeps the same promises as the real monitors, so code tested against it
/// sees what it will see in production.
@Suite("ManualPathMonitor passes the path monitor contract")
struct ManualPathMonitorContractTests {
  @Test(arguments: PathMonitorContract.all)
  func contract(_ check: PathMonitorContract) async throws {
    try await check.run {
      let monitor = ManualPathMonitor()
      return PathMonitorHarness(monitor: monitor, drive: { monitor.send($0) })
    }
  }
}
