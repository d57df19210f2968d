import CourierDomain
import CourierPorts
import CourierTestSupport
import CourierURLSession
import Testing

/// The `Transport` contract, run against `URLSessionTransport`.
@Suite("URLSessionTransport passes the transport contract", .contractBackends)
struct URLSessionContractTests {
  @Test(arguments: TransportContract.all)
  func contract(_ check: TransportContract) async throws {
    try await check.run { path in URLSessionTransport(pathStatus: { path }) }
  }
}
