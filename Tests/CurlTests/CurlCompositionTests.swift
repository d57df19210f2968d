import CourierCurl
import CourierDomain
import CourierLinux
import CourierPorts
import CourierTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// Adds `X-Courier-Test: yes` and counts the attempts it sees.
final class TaggingMiddleware: TransportMiddleware {
  private let count = Mutex(0)
  var attempts: Int { count.withLock { $0 } }

  func intercept(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions,
    next:
      @Sendable (HTTPRequest, RequestBody?, TransportOptions) async throws -> (
        HTTPResponse, ResponseBody
      )
  ) async throws -> (HTTPResponse, ResponseBody) {
    count.withLock { $0 += 1 }
    var request = request
    request.headerFields[.named("X-Courier-Test")] = "yes"
    return try await next(request, body, options)
  }
}

@Suite("The composition root offers the curl transport")
struct CurlCompositionTests {
  @Test("transport \"curl\" from the environment builds a CurlTransport under the decorators")
  func chosenByName() throws {
    let config = try ConfigLoader.load(
      flags: [:], environment: ["HOME": "/nonexistent", "COURIER_TRANSPORT": "curl"],
      readFile: { _ in nil })
    #expect(config.transport == .curl)
    let environment = try CourierEnvironment(config: config)
    #expect(environment.baseTransport is CurlTransport)
  }

  @Test("an unknown transport name lists curl among the known ones")
  func listedAsKnown() {
    #expect(throws: ConfigError.self) {
      _ = try ConfigLoader.load(
        flags: ["transport": "carrier-pigeon"], environment: ["HOME": "/nonexistent"],
        readFile: { _ in nil })
    }
    do {
      _ = try ConfigLoader.load(
        flags: ["transport": "carrier-pigeon"], environment: ["HOME": "/nonexistent"],
        readFile: { _ in nil })
    } catch {
      #expect(String(describing: error).contains("curl"))
    }
  }

  @Test("middlewares given to the environment reach a real server, with the token, once")
  func middlewareOverLoopback() async throws {
    let server = try LoopbackServer(.raw(AuthOriginCheck.ok))
    defer { server.stop() }
    var config = try ConfigLoader.load(
      flags: [:], environment: ["HOME": "/nonexistent", "COURIER_TRANSPORT": "curl"],
      readFile: { _ in nil })
    config.baseURL = server.url
    config.token = "tok-9"
    let tagging = TaggingMiddleware()
    let environment = try CourierEnvironment(config: config, middlewares: [tagging])
    let (response, _) = try await environment.client.send(.get, "/things")
    #expect(response.status == 200)
    #expect(tagging.attempts == 1)
    let head = try #require(server.requestHeads.first)
    #expect(head.contains("x-courier-test: yes"), "\(head)")
    #expect(head.contains("authorization: bearer tok-9"), "\(head)")
  }
}
