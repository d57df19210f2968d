import CourierDomain
import CourierPorts
import CourierTestSupport
import CourierURLSession
import Foundation
import Testing

/// Each way a connection can go wrong must land in the right kind of error.
@Suite("URLSessionTransport against misbehaving loopback servers")
struct URLSessionFailureTests {
  func failure(
    _ behaviour: LoopbackServer.Behaviour, path: PathStatus = .satisfied,
    deadline: Duration = .seconds(10)
  ) async throws -> CourierError {
    let server = try LoopbackServer(behaviour)
    defer { server.stop() }
    let transport = URLSessionTransport(pathStatus: { path })
    do {
      let response = try await transport.send(
        HTTPRequest(method: .get, url: server.url.appendingPathComponent("x")),
        options: TransportOptions(deadline: deadline))
      Issue.record("expected a failure, got status \(response.status)")
      return CourierError(.invalidInput)
    } catch let error as CourierError {
      return error
    }
  }

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

  @Test("reset → connection lost, may have reached the server")
  func reset() async throws {
    let error = try await failure(.reset)
    #expect(error.kind == .connectionLost)
    #expect(error.mayHaveReachedServer)
  }

  @Test("closed mid-body → connection lost")
  func closedMidBody() async throws {
    let error = try await failure(.closeMidBody)
    #expect(error.kind == .connectionLost)
  }

  @Test("closed with no response → connection lost")
  func closedWithoutResponse() async throws {
    let error = try await failure(.closeWithoutResponse)
    #expect(error.kind == .connectionLost)
  }

  @Test("garbage instead of HTTP → invalid response, never a success")
  func garbage() async throws {
    let error = try await failure(.garbage)
    #expect(error.kind == .invalidResponse, "\(error.underlying ?? "")")
    #expect(!error.userMessage.contains("SSH"))
  }

  @Test("a server that hangs → timed out at the caller's deadline, not URLSession's idle timeout")
  func hangs() async throws {
    let start = ContinuousClock.now
    let error = try await failure(.hang, deadline: .milliseconds(500))
    #expect(error.kind == .timedOut)
    #expect(start.duration(to: .now) < .seconds(30), "a hang would run to the 60 s idle timeout")
  }

  @Test("cancelling a request to a hanging server returns promptly as cancelled")
  func cancellation() async throws {
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    let transport = URLSessionTransport()
    let task = Task {
      try await transport.send(
        HTTPRequest(method: .get, url: server.url), options: TransportOptions(deadline: nil))
    }
    // Bounded wait for the connection to be accepted (the synchronisation point).
    let deadline = ContinuousClock.now + .seconds(10)
    while server.acceptedCount == 0 && ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    try #require(server.acceptedCount == 1)
    let start = ContinuousClock.now
    task.cancel()
    do {
      _ = try await task.value
      Issue.record("expected cancellation")
    } catch let error as CourierError {
      #expect(error.kind == .cancelled)
    }
    #expect(start.duration(to: .now) < .seconds(2))
  }

  @Test("a 502 HTML page is a response, classified later without showing HTML")
  func htmlPage() async throws {
    let html = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    let server = try LoopbackServer(
      .raw(
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: \(html.utf8.count)\r\nConnection: close\r\n\r\n\(html)"
      ))
    defer { server.stop() }
    let response = try await URLSessionTransport().send(HTTPRequest(method: .get, url: server.url))
    #expect(response.status == 502)
    let error = try #require(ResponseClassifier.classify(response))
    #expect(error.kind == .server)
    #expect(!error.userMessage.contains("<"))
  }

  @Test("an unknown host → DNS")
  func dns() async throws {
    let transport = URLSessionTransport(pathStatus: { .satisfied })
    do {
      _ = try await transport.send(
        HTTPRequest(method: .get, url: URL(string: "http://no-such-host.invalid/")!),
        options: TransportOptions(deadline: .seconds(10)))
      Issue.record("expected a failure")
    } catch let error as CourierError {
      #expect(error.kind == .dns)
    }
  }
}
