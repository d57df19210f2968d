import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

@Suite("LoggingTransport")
struct LoggingTransportTests {
  @Test("never logs an Authorization or Cookie value")
  func redacts() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(status: 200)
    let lines = Mutex<[String]>([])
    let logging = LoggingTransport(transport) { line in lines.withLock { $0.append(line) } }
    let request = HTTPRequest(
      method: .get, url: URL(fileURLWithPath: "/").testURL("http://127.0.0.1:9/articles"),
      headerFields: [
        .authorization: "Bearer s3cr3t", .cookie: "sid=abc", .accept: "application/json",
      ])
    _ = try await logging.send(request)
    let text = lines.withLock { $0.joined(separator: "\n") }
    #expect(!text.contains("s3cr3t"))
    #expect(!text.contains("sid=abc"))
    #expect(text.contains("Authorization: <redacted>"))
    #expect(text.contains("Accept: application/json"))
    #expect(text.contains("← 200 GET /articles"))
  }
}
