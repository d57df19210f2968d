import CourierDomain
import CourierPorts
import CourierURLSession
import Foundation
import HTTPTypes
import Testing

/// The URLSession transport refuses a response sink instead of buffering the body and copying
/// it (decision 2502).
@Suite("URLSessionTransport and a response sink")
struct URLSessionSinkTests {
  @Test("a GET with a sink is refused before anything is sent, naming the curl transport")
  func refusesASink() async throws {
    let url = try #require(URL(string: "http://127.0.0.1:9/photos/p1"))
    var options = TransportOptions()
    options.responseSink = ResponseSink(
      file: FileManager.default.temporaryDirectory.appendingPathComponent("never-\(UUID())"))
    await #expect {
      _ = try await URLSessionTransport().send(
        HTTPRequest(method: .get, url: url), body: nil, options: options)
    } throws: { error in
      let failure = error as? CourierError
      return failure?.kind == .invalidInput && failure?.code == "response_sink_unsupported"
        && failure?.serverMessage?.contains("curl transport") == true
    }
  }
}
