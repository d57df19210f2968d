import Dispatch
import Synchronization

/// A task executor whose jobs all run on the one thread that calls ``run(until:)``: the
/// `courier` process's main thread, so that a short command starts no thread of the concurrency
/// pool at all.
///
/// A task that prefers it (`Task(executorPreference:)`, `Task.immediateDetached(...)`) runs its
/// nonisolated code here, and so do the default actors it calls, which would otherwise each hop
/// to a pool thread; starting that pool (a worker, its manager, a timer) was a fifth of an offline
/// `courier articles add`. Everything is then serial, as on a one-core machine, where
/// the pool has a single thread too: code that blocks a thread waiting for another job would hang
/// there as well.
package final class CallingThreadExecutor: TaskExecutor {
  private let jobs = Mutex<[UnownedJob]>([])
  private let ready = DispatchSemaphore(value: 0)

  /// Creates an executor; nothing runs until a thread calls ``run(until:)``.
  package init() {}

  /// Queues a job for the running thread (any thread may call this).
  /// - Parameter job: the job.
  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    jobs.withLock { $0.append(job) }
    ready.signal()
  }

  /// Runs the queued jobs on the calling thread, in the order they came, waiting for more, until
  /// `done` says so after a job (the `courier` app never returns: its task ends the process).
  /// - Parameter done: checked after each job.
  package func run(until done: () -> Bool) {
    while !done() {
      ready.wait()
      let job = jobs.withLock { $0.removeFirst() }
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}
