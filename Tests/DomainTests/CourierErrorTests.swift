import CourierDomain
import CourierSystem
import Testing

@Suite("CourierError")
struct CourierErrorTests {
  @Test(
    "a transport table's failure becomes the kind of the same name",
    arguments: TransportFailure.allCases)
  func kindOfTransportFailure(_ failure: TransportFailure) {
    #expect(String(describing: CourierError.Kind(failure)) == failure.rawValue)
  }

  @Test("the transport failures a retry can help are transient, the others not")
  func transientTransportFailures() {
    let transient: Set<TransportFailure> = [
      .offline, .dns, .cannotReachHost, .timedOut, .connectionLost,
    ]
    for failure in TransportFailure.allCases {
      #expect(
        CourierError(CourierError.Kind(failure)).isTransient == transient.contains(failure),
        "\(failure)")
    }
  }
}
