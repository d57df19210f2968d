import CourierCurl
import CourierTestSupport
import Testing

/// The gzip bomb bound of the transport contract (`TransportContract.gzipBombIsBounded`), alone:
/// it measures the whole process's peak resident size. The other bounds are contract checks.
@Suite("CurlTransport bounds", .serialized)
struct CurlBoundsTests {
  @Test("a gzip bomb fails at the 64 MiB limit and memory stays bounded")
  func gzipBomb() async throws {
    try await TransportContract.gzipBombIsBounded(CurlTransport())
  }
}
