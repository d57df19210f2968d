import CourierDomain
import CourierPorts
import CourierTestSupport
import CourierURLSession
import Testing

/// The `Transport` contract, run against `URLSessionTransport`; then what the adapter itself
/// owes after each check: the same transport still serves a request (URLSession on Linux can
/// be left stuck by a cancelled task, platform notes).
@Suite("URLSessionTransport passes the transport contract", .contractBackends)
struct URLSessionContractTests {
  /// What FoundationNetworking does not let the adapter do (decision 2435): it hands over a
  /// status code without the status line, refuses a status line that ends at its code, and
  /// stops the process on a reply with trailer fields.
  static let limits: TransportLimits = {
    var limits = TransportLimits(probeName: "urlsession")
    limits.readsStatusLine = false
    limits.takesStatusWithoutSpace = false
    limits.survivesTrailers = false
    return limits
  }()

  @Test(arguments: TransportContract.all)
  func contract(_ check: TransportContract) async throws {
    let made = try await check.run(
      { path in URLSessionTransport(pathStatus: { path }) }, limits: Self.limits)
    for transport in made {
      #expect(try await TransportContract.healthStatus(through: transport) == 200)
    }
  }
}
