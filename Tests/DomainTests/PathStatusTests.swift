import CourierDomain
import Testing

@Suite("PathStatus")
struct PathStatusTests {
  @Test("a status is matched with == and in a switch with a default, and prints its name")
  func matchingForms() {
    let status = NetworkPath(status: .unsatisfied).status
    #expect(status == .unsatisfied)
    #expect(status != .satisfied)
    let offline: Bool
    switch status {
    case .satisfied, .unknown: offline = false
    case .unsatisfied: offline = true
    default: offline = false
    }
    #expect(offline)
    #expect("\(PathStatus.requiresConnection)" == "requiresConnection")
  }

  @Test("every status round-trips through its name", arguments: PathStatus.allCases)
  func names(_ status: PathStatus) {
    #expect(PathStatus(rawValue: status.description) == status)
  }
}
