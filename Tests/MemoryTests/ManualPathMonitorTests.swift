import CourierDomain
import CourierTestKit
import Testing

@Suite("ManualPathMonitor", .timeLimit(.minutes(1)))
struct ManualPathMonitorTests {
  @Test("each stream starts with the current path and a slow consumer gets the newest")
  func streams() async {
    let monitor = ManualPathMonitor()
    monitor.send(.satisfied)
    let slow = monitor.updates()
    monitor.send(.unsatisfied)
    monitor.send(.requiresConnection)
    var iterator = slow.makeAsyncIterator()
    #expect(await iterator.next()?.status == .requiresConnection)
    var fresh = monitor.updates().makeAsyncIterator()
    #expect(await fresh.next()?.status == .requiresConnection)
    #expect(monitor.subscriberCount == 2)
  }

  @Test("repeats and stale generations are not sent")
  func filters() {
    let monitor = ManualPathMonitor()
    #expect(monitor.send(.satisfied))
    #expect(!monitor.send(.satisfied))
    monitor.restart()
    #expect(monitor.currentPath.status == .unknown)
    #expect(!monitor.send(NetworkPath(status: .unsatisfied, generation: 0)))
    #expect(monitor.send(.unsatisfied))
  }
}
