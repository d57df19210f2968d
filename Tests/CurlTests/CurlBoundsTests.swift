import CourierCurl
import CourierTestSupport
import Testing

/// The gzip bomb bound of the transport contract (`TransportContract.gzipBomb`): the
/// transport runs in a probe process, whose peak resident size is measured. The other bounds are
/// contract checks.
@Suite("CurlTransport bounds", .serialized)
struct CurlBoundsTests {
  @Test("a gzip bomb fails at the 64 MiB limit and memory stays bounded")
  func gzipBomb() async throws {
    let outcome = try await TransportContract.gzipBomb("curl")
    #expect(outcome.refusedAtLimit, "\(outcome)")
    #expect(outcome.closed, "the client never closed the connection: \(outcome)")
    #expect(outcome.peakBytes > 0 && outcome.peakBytes < 512 << 20, "\(outcome)")
  }
}
