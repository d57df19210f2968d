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
  @Test(arguments: TransportContract.all)
  func contract(_ check: TransportContract) async throws {
    let made = try await check.run { path in URLSessionTransport(pathStatus: { path }) }
    for transport in made {
      #expect(try await TransportContract.healthStatus(through: transport) == 200)
    }
  }
}
