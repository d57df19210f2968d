import CourierDomain
import Testing

/// The seed's event matrix, one model per case.
@Suite("NetworkHint")
struct NetworkHintTests {
  @Test("no callback after start: unknown, requests allowed, no banner")
  func noCallbackAfterStart() {
    var hint = NetworkHint()
    _ = hint.restart()
    #expect(hint.path.status == .unknown)
    #expect(hint.allowsRequests)
    #expect(!hint.showsOfflineBanner)
  }

  @Test("requests are allowed whatever the path says", arguments: PathStatus.allCases)
  func requestsNeverBlocked(status: PathStatus) {
    var hint = NetworkHint()
    _ = hint.accept(NetworkPath(status: status))
    #expect(hint.path.status == status)
    #expect(hint.allowsRequests)
    #expect(hint.showsOfflineBanner == (status == .unsatisfied))
  }

  @Test("path up but the API failing: only the request outcome changes")
  func pathUpApiFailing() {
    var hint = NetworkHint()
    _ = hint.accept(NetworkPath(status: .satisfied))
    let before = hint.path
    hint.recordRequestFailure("server unavailable (503)")
    #expect(hint.path == before)
    #expect(!hint.showsOfflineBanner)
    #expect(hint.lastRequestFailure == "server unavailable (503)")
    hint.recordRequestSuccess()
    #expect(hint.lastRequestFailure == nil)
  }

  @Test("recovery resumes waiting work once, not again on a repeat")
  func recoveryOnce() {
    var hint = NetworkHint()
    _ = hint.accept(NetworkPath(status: .satisfied))
    #expect(
      hint.accept(NetworkPath(status: .unsatisfied)) == [.publish(.init(status: .unsatisfied))])
    #expect(hint.showsOfflineBanner)
    let recovered = hint.accept(NetworkPath(status: .satisfied))
    #expect(recovered == [.publish(.init(status: .satisfied)), .resumePendingWork])
    #expect(!hint.showsOfflineBanner)
    #expect(hint.accept(NetworkPath(status: .satisfied)).isEmpty)
  }

  @Test("the first satisfied path after unknown does not replay anything")
  func firstSatisfiedIsNotARecovery() {
    var hint = NetworkHint()
    #expect(hint.accept(NetworkPath(status: .satisfied)) == [.publish(.init(status: .satisfied))])
  }

  @Test("requiresConnection then satisfied is a recovery")
  func requiresConnectionRecovery() {
    var hint = NetworkHint()
    _ = hint.accept(NetworkPath(status: .requiresConnection))
    #expect(hint.accept(NetworkPath(status: .satisfied)).contains(.resumePendingWork))
  }

  @Test("a stale event after a restart changes neither the state nor the cost")
  func staleAfterCancel() {
    var hint = NetworkHint()
    let old = hint.restart()
    _ = hint.accept(NetworkPath(status: .satisfied, isExpensive: true, generation: old))
    #expect(hint.path.status == .satisfied && hint.path.isExpensive)
    let current = hint.restart()
    #expect(current == old + 1)
    #expect(hint.accept(NetworkPath(status: .unsatisfied, generation: old)).isEmpty)
    #expect(hint.path.status == .unknown)
    #expect(!hint.path.isExpensive)
    #expect(
      hint.accept(NetworkPath(status: .requiresConnection, generation: current)).count == 1)
    #expect(hint.path.status == .requiresConnection)
  }

  @Test("a repeated event publishes nothing")
  func repeatedEvent() {
    var hint = NetworkHint()
    let path = NetworkPath(
      status: .satisfied,
      interfaces: [NetworkInterface(name: "eth0", kind: "ethernet", isUsable: true)])
    #expect(hint.accept(path).count == 1)
    #expect(hint.accept(path).isEmpty)
    #expect(hint.accept(path).isEmpty)
  }

  @Test("an expensive or constrained change only re-chooses the transfer policy")
  func expensiveConstrainedChange() {
    var hint = NetworkHint()
    _ = hint.accept(NetworkPath(status: .satisfied))
    let expensive = NetworkPath(status: .satisfied, isExpensive: true)
    #expect(
      hint.accept(expensive)
        == [.publish(expensive), .transferPolicyChanged(expensive: true, constrained: false)])
    let constrained = NetworkPath(status: .satisfied, isConstrained: true)
    #expect(
      hint.accept(constrained)
        == [.publish(constrained), .transferPolicyChanged(expensive: false, constrained: true)])
    #expect(hint.path.isConstrained && !hint.path.isExpensive)
  }

  @Test("the seed's script, step by step")
  func seedScript() {
    var hint = NetworkHint()
    #expect(hint.path.status == .unknown)
    let old = hint.restart()
    _ = hint.accept(NetworkPath(status: .satisfied, isExpensive: true, generation: old))
    #expect(hint.path.status == .satisfied && hint.path.isExpensive)
    let current = hint.restart()
    _ = hint.accept(NetworkPath(status: .unsatisfied, generation: old))
    #expect(hint.path.status == .unknown)
    _ = hint.accept(NetworkPath(status: .requiresConnection, generation: current))
    #expect(hint.path.status == .requiresConnection)
    _ = hint.accept(NetworkPath(status: .satisfied, isConstrained: true, generation: current))
    #expect(hint.path.isConstrained && !hint.path.isExpensive)
    _ = hint.accept(NetworkPath(status: .unsatisfied, generation: current))
    #expect(hint.path.status == .unsatisfied)
    _ = hint.accept(NetworkPath(status: .satisfied, generation: current))
    #expect(hint.path.status == .satisfied && !hint.path.isConstrained)
  }

  @Test("a resynchronisation keeps the path and rejects the old generation")
  func resynchronise() {
    var hint = NetworkHint()
    _ = hint.accept(NetworkPath(status: .satisfied))
    #expect(hint.resynchronise(from: 5) == nil)
    #expect(hint.resynchronise(from: 0) == 1)
    #expect(hint.path.status == .satisfied && hint.path.generation == 1)
    #expect(hint.accept(NetworkPath(status: .unsatisfied, generation: 0)).isEmpty)
    #expect(hint.accept(NetworkPath(status: .satisfied, generation: 1)).isEmpty)
  }

  @Test("follow adopts newer generations and ignores older ones")
  func follow() {
    var hint = NetworkHint()
    _ = hint.follow(NetworkPath(status: .satisfied, generation: 3))
    #expect(hint.generation == 3 && hint.path.status == .satisfied)
    #expect(hint.follow(NetworkPath(status: .unsatisfied, generation: 2)).isEmpty)
    #expect(hint.follow(NetworkPath(status: .satisfied, generation: 4)).isEmpty)
    #expect(hint.generation == 4)
  }
}
