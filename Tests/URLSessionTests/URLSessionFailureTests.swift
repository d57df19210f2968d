import CourierDomain
import CourierPorts
import CourierTestSupport
import CourierURLSession
import Foundation
import HTTPTypes
import Testing

/// What only this adapter decides: "offline" from the path monitor's status. The failure modes
/// every transport shares are in the contract suite (Tests/Support/TransportContract.swift).
@Suite("URLSessionTransport and the path status")
struct URLSessionFailureTests {
  @Test("connection refused → cannot reach host, or offline when the path is down")
  func refused() async throws {
    let port = freeLoopbackPort()
    for (path, kind) in [
      (PathStatus.satisfied, CourierError.Kind.cannotReachHost), (.unsatisfied, .offline),
      (.unknown, .cannotReachHost),
    ] {
      let transport = URLSessionTransport(pathStatus: { path })
      await #expect(throws: CourierError.self) {
        do {
          _ = try await transport.send(
            HTTPRequest(method: .get, url: URL(string: "http://127.0.0.1:\(port)/")!))
        } catch let error as CourierError {
          #expect(error.kind == kind, "path \(path)")
          #expect(error.mayHaveReachedServer == false)
          throw error
        }
      }
    }
  }
}
