import CourierCore
import Testing

@Suite("ProgressThrottle")
struct ProgressThrottleTests {
  @Test("on an interval, lets through at most one report per interval")
  func interval() {
    let throttle = ProgressThrottle(interval: .milliseconds(100))
    let start = ContinuousClock.now
    var admitted: [Int64] = []
    // 1,000 reports over one second, one a millisecond, moving a byte every 10 ms.
    for millisecond in 0..<1000 {
      let sent = Int64(millisecond / 10)
      if throttle.admit(sent: sent, total: 100, at: start + .milliseconds(millisecond)) {
        admitted.append(sent)
      }
    }
    #expect(admitted == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90])
    // The end passes at once; so does going back (a new attempt).
    #expect(throttle.admit(sent: 100, total: 100, at: start + .milliseconds(1001)))
    #expect(throttle.admit(sent: 0, total: 100, at: start + .milliseconds(1002)))
  }

  @Test("on a granularity, lets through moves of at least that many bytes, and the end")
  func granularity() {
    let throttle = ProgressThrottle(granularity: 1000)
    let admitted = stride(from: Int64(0), through: 5000, by: 250).filter {
      throttle.admit(sent: $0, total: 5000)
    }
    #expect(admitted == [1000, 2000, 3000, 4000, 5000])
    #expect(!throttle.admit(sent: 5000, total: 5000), "a repeated count never passes")
  }

  @Test("after reset, counting starts afresh: from zero bytes, and with no wait")
  func reset() {
    let bytes = ProgressThrottle(granularity: 1000)
    #expect(bytes.admit(sent: 1000, total: 5000))
    #expect(!bytes.admit(sent: 1500, total: 5000))
    bytes.reset()
    #expect(bytes.admit(sent: 1500, total: 5000))

    let time = ProgressThrottle(interval: .seconds(1))
    let start = ContinuousClock.now
    #expect(time.admit(sent: 1, total: 10, at: start))
    #expect(!time.admit(sent: 2, total: 10, at: start + .milliseconds(1)))
    time.reset()
    #expect(time.admit(sent: 2, total: 10, at: start + .milliseconds(2)))
  }
}
