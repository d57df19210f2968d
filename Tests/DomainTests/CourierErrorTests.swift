import CourierDomain
import CourierSystem
import Testing

@Suite("CourierError")
struct CourierErrorTests {
  static let offline = CourierError(.offline, context: "GET /articles")

  /// The three ways a user matches a kind, as they would write them.
  @Test("a kind is matched with ==, in a switch with a default, and in a catch pattern")
  func matchingForms() throws {
    #expect(Self.offline.kind == .offline)
    #expect(Self.offline.kind != .timedOut)

    let word: String
    switch Self.offline.kind {
    case .timedOut: word = "slow"
    case .offline: word = "offline"
    default: word = "other"
    }
    #expect(word == "offline")

    func fail() throws { throw Self.offline }
    var caught = ""
    do {
      try fail()
    } catch CourierError.timedOut {
      caught = "timedOut"
    } catch CourierError.offline {
      caught = "offline"
    } catch {
      caught = "other"
    }
    #expect(caught == "offline")
  }

  @Test("a catch pattern matches only a CourierError of its kind")
  func catchPatternIsPrecise() {
    struct Elsewhere: Error {}
    #expect(!(CourierError.offline ~= Elsewhere()))
    #expect(!(CourierError.offline ~= CourierError(.timedOut)))
    #expect(CourierError.offline ~= Self.offline)
    #expect(CourierError.Kind.offline == CourierError.offline)
  }

  @Test("every kind is named once and spelled as logs and metrics spell it")
  func kindNames() {
    let names = CourierError.Kind.allCases.map(String.init(describing:))
    #expect(names.count == 19)
    #expect(Set(names).count == names.count)
    #expect(names.first == "offline")
    #expect(CourierError.Kind(rawValue: "notTheServer") == .notTheServer)
    #expect(CourierError.Kind(rawValue: "nonsense") == nil)
  }

  @Test(
    "a transport table's failure becomes the kind of the same name",
    arguments: TransportFailure.allCases)
  func kindOfTransportFailure(_ failure: TransportFailure) {
    #expect(
      String(describing: CourierError.Kind(transportFailure: failure)) == failure.rawValue)
  }

  @Test("the transport failures a retry can help are transient, the others not")
  func transientTransportFailures() {
    let transient: Set<TransportFailure> = [
      .offline, .dns, .cannotReachHost, .timedOut, .connectionLost,
    ]
    for failure in TransportFailure.allCases {
      #expect(
        CourierError(CourierError.Kind(transportFailure: failure)).isTransient
          == transient.contains(failure),
        "\(failure)")
    }
  }

  @Test("a TLS failure says what to change: the pins, the CA bundle, the client certificate")
  func tlsMessages() {
    let pin = CourierError(.tls, code: "tls_pin_mismatch")
    #expect(pin.userMessage.contains("pinned_public_keys"))
    #expect(pin.userMessage.contains("nothing was sent"))
    #expect(!pin.isTransient)
    let untrusted = CourierError(.tls, code: "tls_untrusted")
    #expect(untrusted.userMessage.contains("ca_bundle"))
    #expect(!untrusted.isTransient)
    #expect(
      CourierError(.tls, code: "tls_client_certificate").userMessage.contains("client_certificate"))
    #expect(
      CourierError(.tls).userMessage
        == "A secure connection to the server couldn't be established.")
  }
}
