import CourierDomain
import Testing

@Suite("PathDebouncer")
struct PathDebouncerTests {
  let delays = PathDebounceDelays(online: .milliseconds(300), offline: .seconds(2))
  let up = NetworkPath(status: .satisfied)
  let down = NetworkPath(status: .unsatisfied)

  @Test("the first path is published at once")
  func firstAtOnce() {
    var debouncer = PathDebouncer(delays: delays)
    #expect(debouncer.receive(down) == .publish(down))
    #expect(debouncer.published == down)
  }

  @Test("going online waits the short delay, going offline the long one")
  func delaysByDirection() {
    var debouncer = PathDebouncer(delays: delays)
    _ = debouncer.receive(down)
    #expect(debouncer.receive(up) == .startTimer(token: 1, after: .milliseconds(300)))
    #expect(debouncer.fire(1) == up)
    #expect(debouncer.receive(down) == .startTimer(token: 2, after: .seconds(2)))
    #expect(debouncer.fire(2) == down)
    #expect(debouncer.published == down)
  }

  @Test("a flap back to the published path cancels the pending one")
  func flapCancels() {
    var debouncer = PathDebouncer(delays: delays)
    _ = debouncer.receive(up)
    #expect(debouncer.receive(down) == .startTimer(token: 1, after: .seconds(2)))
    #expect(debouncer.receive(up) == .cancelTimer)
    #expect(debouncer.fire(1) == nil)
    #expect(debouncer.published == up)
    #expect(debouncer.receive(up) == .none)
  }

  @Test("changes of the same kind replace the pending path without restarting the timer")
  func floodDoesNotPostpone() {
    var debouncer = PathDebouncer(delays: delays)
    _ = debouncer.receive(up)
    #expect(debouncer.receive(down) == .startTimer(token: 1, after: .seconds(2)))
    let unknown = NetworkPath(status: .unknown, generation: 1)
    #expect(debouncer.receive(unknown) == .none)
    #expect(debouncer.fire(1) == unknown)
  }

  @Test("a change of kind while pending restarts with the new delay")
  func kindChangeRestarts() {
    var debouncer = PathDebouncer(delays: delays)
    _ = debouncer.receive(down)
    #expect(debouncer.receive(up) == .startTimer(token: 1, after: .milliseconds(300)))
    let downOther = NetworkPath(status: .requiresConnection)
    #expect(debouncer.receive(downOther) == .startTimer(token: 2, after: .seconds(2)))
    #expect(debouncer.fire(1) == nil)
    #expect(debouncer.fire(2) == downOther)
  }

  @Test("a known path after unknown passes at once")
  func afterUnknown() {
    var debouncer = PathDebouncer(delays: delays)
    #expect(debouncer.receive(.unknown) == .publish(.unknown))
    #expect(debouncer.receive(down) == .publish(down))
    #expect(
      debouncer.receive(NetworkPath(status: .unknown, generation: 1))
        == .startTimer(token: 1, after: .seconds(2)))
    #expect(debouncer.receive(down) == .cancelTimer)
  }

  @Test("a generation-only change publishes nothing")
  func generationOnly() {
    var debouncer = PathDebouncer(delays: delays)
    _ = debouncer.receive(up)
    #expect(debouncer.receive(NetworkPath(status: .satisfied, generation: 9)) == .none)
  }
}
