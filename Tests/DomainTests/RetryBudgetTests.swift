import CourierDomain
import Testing

@Suite("RetryBudget")
struct RetryBudgetTests {
  @Test("five failures of ten tokens stop retries; successes earn them back slowly")
  func throttles() {
    var budget = RetryBudget(capacity: 10, refillPerSuccess: 0.1)
    #expect(budget.allowsRetry)
    for _ in 0..<4 { budget.recordFailure() }
    #expect(budget.allowsRetry)
    budget.recordFailure()
    #expect(!budget.allowsRetry)
    for _ in 0..<10 { budget.recordSuccess() }
    #expect(budget.allowsRetry)
    for _ in 0..<1000 { budget.recordSuccess() }
    #expect(budget.tokens == 10)
  }
}
