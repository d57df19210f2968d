import CourierSystem
import Foundation
import Synchronization
import Testing

/// The POSIX thread that replaced Foundation's `Thread` in the adapters (decision 1414).
@Suite("DetachedThread")
struct DetachedThreadTests {
  @Test("runs its body on a new thread named as asked, cut to 15 bytes")
  func runsNamed() async throws {
    for (asked, shown) in [
      ("courier-test", "courier-test"), ("courier-0123456789", "courier-0123456"),
    ] {
      let caller = UInt(pthread_self())
      let seen = await withCheckedContinuation {
        (done: CheckedContinuation<(String, UInt), Never>) in
        DetachedThread.start(name: asked) {
          let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
          done.resume(returning: (comm.trimmingCharacters(in: .newlines), UInt(pthread_self())))
        }
      }
      #expect(seen.0 == shown)
      #expect(seen.1 != caller)
    }
  }
}
