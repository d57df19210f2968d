import CourierCLI
import CourierTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// An actor of the default kind: a task that prefers an executor runs its methods there too.
private actor Counter {
  var value = 0

  func increment() -> UInt {
    value += 1
    return currentThread()
  }
}

private func currentThread() -> UInt { UInt(pthread_self()) }

/// What the tests share between threads.
private final class Shared<Value: Sendable>: Sendable {
  let value: Mutex<Value>
  init(_ value: Value) { self.value = Mutex(value) }
}

@Suite("CallingThreadExecutor")
struct CallingThreadExecutorTests {
  /// Runs `executor` on a thread of its own (never one of the pool's) until `body` is done,
  /// and returns that thread and what `body` returned.
  func running<T: Sendable>(
    _ executor: CallingThreadExecutor, _ body: @escaping @Sendable () async throws -> T
  ) async throws -> (thread: UInt, result: T) {
    let stop = Shared(false)
    let runner = Shared<UInt>(0)
    async let ran: Void = offPool {
      runner.value.withLock { $0 = currentThread() }
      executor.run { stop.value.withLock { $0 } }
    }
    let result = try await Task(executorPreference: executor) { try await body() }.value
    stop.value.withLock { $0 = true }
    // One more job, so that the loop looks at `stop` again.
    await Task(executorPreference: executor) {}.value
    try await ran
    return (runner.value.withLock { $0 }, result)
  }

  @Test("a task's code, the default actors it calls and its resumptions run on the one thread")
  func oneThread() async throws {
    let executor = CallingThreadExecutor()
    let counter = Counter()
    let (thread, seen) = try await running(executor) { () -> [UInt] in
      var seen = [currentThread()]
      seen.append(await counter.increment())
      seen.append(currentThread())
      await Task.yield()
      seen.append(currentThread())
      async let child = currentThread()
      seen.append(await child)
      return seen
    }
    #expect(thread != 0)
    #expect(
      seen == Array(repeating: thread, count: 5), "ran on \(seen), the executor's is \(thread)")
    #expect(await counter.value == 1)
  }

  @Test("jobs run in the order they came")
  func order() async throws {
    let executor = CallingThreadExecutor()
    let log = Shared<[Int]>([])
    _ = try await running(executor) {
      // Each task's first job is queued when it is made; none runs before the loop takes it.
      let tasks = (0..<20).map { index in
        Task(executorPreference: executor) { log.value.withLock { $0.append(index) } }
      }
      for task in tasks { await task.value }
    }
    #expect(log.value.withLock { $0 } == Array(0..<20))
  }
}
