import CourierDomain
import CourierPorts
import CourierTestKit
import Testing

/// The in-memory store's driving and inspection API, for users' own tests.
@Suite("InMemoryLocalStore")
struct InMemoryLocalStoreTests {
  typealias F = Fixture

  @Test("an injected commit failure changes nothing, then writes work again")
  func injectedFailure() throws {
    let store = InMemoryLocalStore()
    store.failNextCommit()
    let op = F.operation("a", .create, "A")
    let error = try #require(throws: StoreError.self) {
      try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A")), op)
    }
    #expect(error.code == .io)
    #expect(store.state == LocalStoreState())
    #expect(store.commits.isEmpty)
    try store.applyAndEnqueue(.put(F.key("a"), payload: F.payload("A")), op)
    #expect(store.commits.count == 1)
    #expect(store.state.entry(op.id)?.sequence == 1)
  }
}
