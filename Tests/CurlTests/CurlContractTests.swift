import CourierCurl
import CourierDomain
import CourierPorts
import CourierTestSupport
import Testing

/// The `Transport` contract, run against `CurlTransport`.
@Suite("CurlTransport passes the transport contract", .contractBackends)
struct CurlContractTests {
  @Test(arguments: TransportContract.all)
  func contract(_ check: TransportContract) async throws {
    try await check.run { path in CurlTransport(pathStatus: { path }) }
  }
}
