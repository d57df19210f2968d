import CourierCurl
import CourierDomain
import CourierPorts
import CourierTestSupport
import Testing

/// The `Transport` contract, run against `CurlTransport`; then what the adapter itself owes
/// after each check: it still serves a request, and once shut down no transfer is left.
@Suite("CurlTransport passes the transport contract", .contractBackends)
struct CurlContractTests {
  @Test(arguments: TransportContract.all)
  func contract(_ check: TransportContract) async throws {
    let made = try await check.run(
      { path in CurlTransport(pathStatus: { path }) }, limits: TransportLimits(probeName: "curl"))
    for transport in made {
      #expect(try await TransportContract.healthStatus(through: transport) == 200)
      let curl = try #require(transport as? CurlTransport)
      await curl.shutdown()
      #expect(curl.activeTransfers == 0)
    }
  }
}
