import CourierCore
import CourierDomain
import CourierTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A consumer cancelled while the state changes: a yield (which resumes the consumer under its
/// task's lock) and the stream's termination (run under that same lock) must never wait for
/// each other. Before the fix they took the publisher's one lock in opposite orders, and a
/// `sync --watch` stopping on SIGTERM could hang for ever. The limit catches that hang; it is
/// 3 minutes because beside the whole suite on two cores the 1,000 rounds took 118 s.
@Suite("SyncStatePublisher", .timeLimit(.minutes(3)))
struct SyncStatePublisherTests {
  @Test("consumers cancelled during a storm of changes never deadlock the publisher")
  func cancelDuringUpdates() async {
    let publisher = SyncStatePublisher()
    // The storm runs on a thread of its own (a loop that never suspends would hold one of the
    // concurrency pool's two threads) and gives the processor up after each change: a thread
    // that re-takes the state's lock without pause starves everyone else of it on a loaded
    // 2-core machine, which looked like the deadlock this test looks for.
    let stop = Atomic(false)
    let storm = Task {
      try await offPool {
        var count = 0
        while !stop.load(ordering: .relaxed) {
          count += 1
          publisher.update { $0.pendingCount = count }
          sched_yield()
        }
      }
    }
    for _ in 0..<1000 {
      let consumer = Task.detached {
        for await _ in publisher.updates() {}
      }
      await Task.yield()
      consumer.cancel()
      await consumer.value
    }
    stop.store(true, ordering: .relaxed)
    _ = await storm.result
    #expect(publisher.subscriberCount == 0)
  }

  @Test("every subscriber sees the newest state last")
  func newestLast() async {
    let publisher = SyncStatePublisher()
    var stream = publisher.updates().makeAsyncIterator()
    for count in 1...100 { publisher.update { $0.pendingCount = count } }
    publisher.finish()
    var last = -1
    while let state = await stream.next() { last = state.pendingCount }
    #expect(last == 100)
  }
}
