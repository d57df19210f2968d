import CourierCurl
import CourierTestSupport
import Testing

/// The gzip bomb bound of the transport contract (`TransportContract.gzipBombIsBounded`): the
/// transport runs in a probe process, whose peak resident size is measured. The other bounds are
/// contract checks.
@Suite("CurlTransport bounds", .serialized)
struct CurlBoundsTests {
  @Test("a gzip bomb fails at the 64 MiB limit and memory stays bounded")
  func gzipBomb() async throws {
    try await TransportContract.gzipBombIsBounded("curl")
  }
}
