import CourierDomain
import CourierPorts
import CourierSystem
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// Makes the transport under test, told the path status it should assume.
public typealias TransportFactory = @Sendable (PathStatus) -> any Transport

/// The backends the contract runs against, started once for a suite by `ContractBackends`.
public struct ContractEnvironment: Sendable {
  /// The reference backend with default settings.
  public let backend: ReferenceBackend
  /// The reference backend with `COURIER_BACKEND_MAX_BODY` = 1 MiB: a larger `Content-Length`
  /// gets 413 before the body is read, as a proxy does.
  public let limited: ReferenceBackend

  /// The environment of the running suite.
  @TaskLocal public static var current: ContractEnvironment?
}

/// A suite trait that starts the contract's backends once around the whole suite and stops them
/// after, so no backend outlives the test process.
public struct ContractBackends: SuiteTrait, TestScoping {
  /// Creates the trait.
  public init() {}

  /// Starts both backends, runs the suite with them, stops them.
  /// - Parameters:
  ///   - test: the suite.
  ///   - testCase: unused.
  ///   - function: the suite's tests.
  /// - Throws: when a backend does not start, or what the tests throw.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    async let backend = ReferenceBackend()
    async let limited = ReferenceBackend(environment: ["COURIER_BACKEND_MAX_BODY": "1048576"])
    let environment = try await ContractEnvironment(backend: backend, limited: limited)
    var failure: (any Error)?
    do {
      try await ContractEnvironment.$current.withValue(environment) { try await function() }
    } catch {
      failure = error
    }
    // Stopping waits for the processes: do it off the cooperative pool (two threads on this
    // machine), which other suites' tests are using meanwhile.
    await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        environment.backend.stop()
        environment.limited.stop()
        continuation.resume()
      }
    }
    if let failure { throw failure }
  }
}

extension Trait where Self == ContractBackends {
  /// Starts the contract's backends around the suite.
  public static var contractBackends: ContractBackends { ContractBackends() }
}

/// The behaviour every adapter of the `Transport` port must show, as a list of checks
/// parameterised by a factory: an adapter's test target runs each check with its own factory.
public struct TransportContract: Sendable, CustomStringConvertible {
  /// The check's name, shown in test results.
  public let name: String
  let body: @Sendable (TransportFactory, ContractEnvironment?) async throws -> Void

  /// The check's name.
  public var description: String { name }

  /// Runs the check.
  /// - Parameters:
  ///   - factory: makes the transport under test.
  ///   - limits: what the adapter is known not to do as the contract asks (decision 2435).
  /// - Throws: what the check throws (expectations are recorded as issues).
  /// - Returns: every transport the check made, for the adapter's own checks afterwards.
  @discardableResult
  public func run(
    _ factory: @escaping TransportFactory, limits: TransportLimits = TransportLimits(probeName: "")
  ) async throws -> [any Transport] {
    final class Made: Sendable { let transports = Mutex<[any Transport]>([]) }
    let made = Made()
    try await TransportLimits.$current.withValue(limits) {
      try await body(
        { path in
          let transport = factory(path)
          made.transports.withLock { $0.append(transport) }
          return transport
        }, ContractEnvironment.current)
    }
    return made.transports.withLock { $0 }
  }

  /// The status a transport gets for `GET /health` from the contract's backend: a transport
  /// must stay usable after whatever a check did to it (a hang, a reset, a cancellation).
  /// - Parameter transport: the transport.
  /// - Returns: the status.
  /// - Throws: when the request fails or the suite has no backend.
  public static func healthStatus(through transport: any Transport) async throws -> Int {
    let backend = try #require(ContractEnvironment.current?.backend)
    let (response, _) = try await transport.send(
      HTTPRequest(method: .get, url: backend.url.appendingPathComponent("health")),
      options: TransportOptions(deadline: .seconds(20)))
    return response.status.code
  }

  /// Every check.
  public static let all: [TransportContract] =
    [
      articlesRoundTrip, idempotencyHeaders, inMemoryMultipart, uploadFromFile, uploadSegments,
      earlyRefusal,
      refused, reset, closedMidBody, closedWithoutResponse, garbage, hangsPastDeadline,
      hangsPastIdleTimeout, cancellation, htmlErrorPage, unknownHost, sameOriginRedirects,
      otherOriginRedirect,
      fileUploadRedirected, compressedResponse,
    ] + bounds + framing

  // MARK: against the reference backend

  static let articlesRoundTrip = TransportContract(name: "PUT, GET, 304, DELETE on /articles") {
    make, environment in
    let backend = try #require(environment?.backend)
    let transport = make(.satisfied)
    let token = try await login(transport, backend)
    let id = UUID().uuidString
    let url = backend.url.appendingPathComponent("articles/\(id)")
    var auth: HTTPFields = [.authorization: "Bearer \(token)"]
    auth[.contentType] = "application/json"
    let (created, _) = try await transport.send(
      HTTPRequest(
        method: .put, url: url, headerFields: auth),
      body: .bytes(Data(#"{"title":"Crème brûlée","body":"Ünïcode ✓"}"#.utf8)))
    #expect(created.status == 201)
    let (fetched, fetchedBody) = try await transport.send(
      HTTPRequest(method: .get, url: url, headerFields: auth))
    #expect(fetched.status == 200)
    let etag = try #require(fetched.headerFields[.eTag])
    #expect(etag == "\"v1\"")
    let object = try JSONSerialization.jsonObject(with: fetchedBody.bytes) as? [String: Any]
    #expect(object?["title"] as? String == "Crème brûlée")
    #expect(object?["body"] as? String == "Ünïcode ✓")
    var conditional = auth
    conditional[.ifNoneMatch] = etag
    let (notModified, notModifiedBody) = try await transport.send(
      HTTPRequest(method: .get, url: url, headerFields: conditional))
    #expect(notModified.status == 304)
    #expect(notModifiedBody.bytes.isEmpty)
    var replace = auth
    replace[.ifMatch] = etag
    let (updated, _) = try await transport.send(
      HTTPRequest(
        method: .put, url: url, headerFields: replace),
      body: .bytes(Data(#"{"title":"t2","body":"b2"}"#.utf8)))
    #expect(updated.status == 200)
    #expect(updated.headerFields[.eTag] == "\"v2\"")
    let (deleted, _) = try await transport.send(
      HTTPRequest(method: .delete, url: url, headerFields: auth))
    #expect(deleted.status == 204)
    let (gone, goneBody) = try await transport.send(
      HTTPRequest(method: .get, url: url, headerFields: auth))
    #expect(gone.status == 404)
    #expect(ResponseClassifier.classify(gone, body: goneBody.bytes)?.kind == .business)
  }

  static let idempotencyHeaders = TransportContract(
    name: "POST with a custom header; the replay's response header comes back"
  ) { make, environment in
    let backend = try #require(environment?.backend)
    let transport = make(.satisfied)
    let token = try await login(transport, backend)
    let id = UUID().uuidString
    let request = HTTPRequest(
      method: .post, url: backend.url.appendingPathComponent("articles"),
      headerFields: [
        .authorization: "Bearer \(token)", .contentType: "application/json",
        .idempotencyKey: "contract-\(id)",
      ])
    let body = RequestBody.bytes(Data(#"{"id":"\#(id)","title":"once","body":"x"}"#.utf8))
    let (first, firstBody) = try await transport.send(request, body: body)
    let (second, secondBody) = try await transport.send(request, body: body)
    #expect(first.status == 201)
    #expect(second.status == 201)
    #expect(first.headerFields[.idempotentReplayed] == nil)
    #expect(second.headerFields[.idempotentReplayed] == "true")
    #expect(secondBody.bytes == firstBody.bytes)
  }

  static let inMemoryMultipart = TransportContract(
    name: "POST an in-memory multipart body to the /upload echo"
  ) { make, environment in
    let backend = try #require(environment?.backend)
    let value = String(repeating: "0123456789abcdef", count: 8192) + "é"
    let boundary = "contract-\(UUID().uuidString)"
    let body = Multipart.field("note", value, boundary: boundary) + Multipart.close(boundary)
    let (response, responseBody) = try await make(.satisfied).send(
      HTTPRequest(
        method: .post, url: backend.url.appendingPathComponent("upload"),
        headerFields: [.contentType: "multipart/form-data; boundary=\(boundary)"]),
      body: .bytes(body))
    #expect(response.status == 200)
    let parts = try JSONSerialization.jsonObject(with: responseBody.bytes) as? [[String: Any]]
    #expect(parts?.count == 1)
    #expect(parts?.first?["field"] as? String == "note")
    #expect(parts?.first?["value"] as? String == value)
  }

  static let uploadFromFile = TransportContract(
    name: "upload a multipart body from a file, with progress"
  ) { make, environment in
    let backend = try #require(environment?.backend)
    let boundary = "contract-\(UUID().uuidString)"
    let payloadSize = 3 << 20
    let file = try Multipart.writeBodyFile(boundary: boundary, payloadSize: payloadSize)
    defer { try? FileManager.default.removeItem(at: file) }
    let fileSize = try #require(
      FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
    let seen = ProgressLog()
    let (response, responseBody) = try await make(.satisfied).send(
      HTTPRequest(
        method: .post, url: backend.url.appendingPathComponent("upload"),
        headerFields: [.contentType: "multipart/form-data; boundary=\(boundary)"]),
      body: .file(file),
      options: TransportOptions(deadline: .seconds(60), progress: { seen.append($0) }))
    #expect(response.status == 200)
    let parts = try JSONSerialization.jsonObject(with: responseBody.bytes) as? [[String: Any]]
    #expect(parts?.count == 2)
    #expect(parts?.first?["value"] as? String == "a title")
    #expect(parts?.last?["size"] as? Int == payloadSize)
    #expect(parts?.last?["sha256"] as? String == Multipart.payloadSHA256(payloadSize))
    let reports = seen.values
    #expect(!reports.isEmpty)
    #expect(reports.last?.sent == Int64(fileSize))
    #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.sent <= $1.sent })
  }

  static let uploadSegments = TransportContract(
    name: "upload a body given as segments: memory around a range of a file, with progress"
  ) { make, environment in
    let backend = try #require(environment?.backend)
    let boundary = "contract-\(UUID().uuidString)"
    let payloadSize = 2 << 20
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-contract-\(UUID().uuidString).bin")
    // The payload sits between 100 bytes of padding on each side: only its range is sent.
    try (Data(count: 100) + Multipart.payload(payloadSize) + Data(count: 100)).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let segments: [BodySegment] = [
      .bytes(
        Multipart.field("title", "segments", boundary: boundary)
          + Multipart.fileHead("file", filename: "p.bin", boundary: boundary)),
      .file(file, offset: 100, length: Int64(payloadSize)),
      .bytes(Multipart.close(boundary, afterFile: true)),
    ]
    let seen = ProgressLog()
    let (response, responseBody) = try await make(.satisfied).send(
      HTTPRequest(
        method: .post, url: backend.url.appendingPathComponent("upload"),
        headerFields: [.contentType: "multipart/form-data; boundary=\(boundary)"]),
      body: .segments(segments),
      options: TransportOptions(deadline: .seconds(60), progress: { seen.append($0) }))
    #expect(response.status == 200)
    let parts = try JSONSerialization.jsonObject(with: responseBody.bytes) as? [[String: Any]]
    #expect(parts?.first?["value"] as? String == "segments")
    #expect(parts?.last?["size"] as? Int == payloadSize)
    #expect(parts?.last?["sha256"] as? String == Multipart.payloadSHA256(payloadSize))
    #expect(seen.values.last?.sent == segments.totalLength)
  }

  static let earlyRefusal = TransportContract(
    name: "a 413 sent before the body comes back promptly, not as a hang"
  ) { make, environment in
    let limited = try #require(environment?.limited)
    let boundary = "contract-\(UUID().uuidString)"
    let file = try Multipart.writeBodyFile(boundary: boundary, payloadSize: 8 << 20)
    defer { try? FileManager.default.removeItem(at: file) }
    let start = ContinuousClock.now
    do {
      let (response, responseBody) = try await make(.satisfied).send(
        HTTPRequest(
          method: .post, url: limited.url.appendingPathComponent("upload"),
          headerFields: [.contentType: "multipart/form-data; boundary=\(boundary)"]),
        body: .file(file), options: TransportOptions(deadline: .seconds(20)))
      #expect(response.status == 413)
      #expect(ResponseClassifier.classify(response, body: responseBody.bytes)?.kind == .business)
    } catch let error as CourierError {
      // A server that closes while the body is still coming may reset instead: acceptable only
      // as a prompt, retryable loss, never as a timeout.
      #expect(
        error.kind == .connectionLost,
        "expected the 413 or a prompt reset, got \(error.kind): \(error.underlying ?? "")")
    }
    #expect(start.duration(to: .now) < .seconds(30), "a hang would run to the 60 s idle timeout")
  }

  // MARK: against misbehaving servers

  static let refused = TransportContract(
    name: "connection refused → cannot reach host, or offline when the path is down"
  ) { make, _ in
    // Bound and never listening for the whole check: refused, and no one else can take it.
    let refusing = try RefusingLoopbackPort()
    let url = try #require(URL(string: "http://127.0.0.1:\(refusing.port)/"))
    defer { withExtendedLifetime(refusing) {} }
    for (path, kind) in [
      (PathStatus.satisfied, CourierError.Kind.cannotReachHost), (.unsatisfied, .offline),
      (.unknown, .cannotReachHost),
    ] {
      let error = try await failure(of: make(path), HTTPRequest(method: .get, url: url))
      #expect(error.kind == kind, "path \(path)")
      #expect(error.mayHaveReachedServer == false)
    }
  }

  static let reset = TransportContract(
    name: "reset → connection lost, may have reached the server"
  ) { make, _ in
    let error = try await failure(of: make(.satisfied), against: .reset)
    #expect(error.kind == .connectionLost)
    #expect(error.mayHaveReachedServer)
  }

  static let closedMidBody = TransportContract(
    name: "closed mid-body → a truncated reply, not a lost connection"
  ) { make, _ in
    // The server answered and closed before the length it announced (decision 2436).
    let error = try await failure(of: make(.satisfied), against: .closeMidBody)
    #expect(error.kind == .invalidResponse, "\(error)")
    #expect(error.code == "reply_truncated", "\(error)")
    #expect(error.mayHaveReachedServer)
  }

  static let closedWithoutResponse = TransportContract(
    name: "closed with no response → connection lost"
  ) { make, _ in
    let error = try await failure(of: make(.satisfied), against: .closeWithoutResponse)
    #expect(error.kind == .connectionLost)
  }

  /// The name of the check that a server answering garbage fails cleanly.
  public static let garbageName =
    "garbage instead of HTTP → invalid response or connection lost, never a success"

  static let garbage = TransportContract(name: garbageName) { make, _ in
    let error = try await failure(of: make(.satisfied), against: .garbage)
    #expect([CourierError.Kind.invalidResponse, .connectionLost].contains(error.kind))
    #expect(!error.userMessage.contains("SSH"))
  }

  /// The name of the check that a hanging server times out at the caller's deadline.
  public static let hangsName = "a server that hangs → timed out at the caller's deadline"

  static let hangsPastDeadline = TransportContract(name: hangsName) { make, _ in
    let start = ContinuousClock.now
    let error = try await failure(
      of: make(.satisfied), against: .hang, deadline: .milliseconds(500))
    let elapsed = start.duration(to: .now)
    #expect(error.kind == .timedOut)
    #expect(elapsed >= .milliseconds(450))
    #expect(elapsed < .seconds(30), "a hang would run to the 60 s idle timeout")
  }

  /// The name of the check that a silent server times out at the caller's idle timeout.
  public static let idleName =
    "a server that goes silent → timed out at the idle timeout, no deadline"

  static let hangsPastIdleTimeout = TransportContract(name: idleName) { make, _ in
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    var options = TransportOptions(deadline: nil)
    options.idleTimeout = .seconds(1)
    let start = ContinuousClock.now
    do {
      let (response, responseBody) = try await make(.satisfied).send(
        HTTPRequest(method: .post, url: server.url.appendingPathComponent("x")),
        body: .bytes(Data(repeating: 7, count: 1000)), options: options)
      Issue.record("expected a timeout, got status \(response.status)")
    } catch let error as CourierError {
      #expect(error.kind == .timedOut, "\(error)")
    }
    let elapsed = start.duration(to: .now)
    #expect(elapsed >= .milliseconds(900))
    #expect(elapsed < .seconds(30), "a hang would run to the 60 s idle timeout")
  }

  static let cancellation = TransportContract(
    name: "cancelling a request to a hanging server returns promptly as cancelled"
  ) { make, _ in
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    let transport = make(.satisfied)
    let task = Task {
      try await transport.send(
        HTTPRequest(method: .get, url: server.url), options: TransportOptions(deadline: nil))
    }
    let accepted = ContinuousClock.now + .seconds(30)
    while server.acceptedCount == 0 && ContinuousClock.now < accepted {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(server.acceptedCount == 1)
    let start = ContinuousClock.now
    task.cancel()
    do {
      _ = try await task.value
      Issue.record("expected cancellation")
    } catch let error as CourierError {
      #expect(error.kind == .cancelled)
    }
    // Prompt, not instant: a hang would last until libcurl's or URLSession's own 60 s idle
    // timeout; 30 s leaves room for a 2-core machine busy with other suites (18 s was seen).
    #expect(start.duration(to: .now) < .seconds(30), "a hang would run to the 60 s idle timeout")
  }

  static let htmlErrorPage = TransportContract(
    name: "a 502 HTML page is a response, classified later without showing HTML"
  ) { make, _ in
    let html = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    let server = try LoopbackServer(
      .raw(
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n"
          + "Content-Length: \(html.utf8.count)\r\nConnection: close\r\n\r\n\(html)"))
    defer { server.stop() }
    let (response, responseBody) = try await make(.satisfied).send(
      HTTPRequest(method: .get, url: server.url))
    #expect(response.status == 502)
    #expect(response.headerFields[.contentType] == "text/html")
    #expect(String(decoding: responseBody.bytes, as: UTF8.self) == html)
    let error = try #require(ResponseClassifier.classify(response, body: responseBody.bytes))
    #expect(error.kind == .server)
    #expect(!error.userMessage.contains("<"))
  }

  static let unknownHost = TransportContract(name: "a name that cannot resolve → DNS") {
    make, _ in
    // A 64-character label is refused by the resolver itself: no query leaves the machine.
    let host = String(repeating: "a", count: 64) + ".invalid"
    let url = try #require(URL(string: "http://\(host)/"))
    let error = try await failure(of: make(.satisfied), HTTPRequest(method: .get, url: url))
    #expect(error.kind == .dns)
    #expect(error.mayHaveReachedServer == false)
  }

  static let sameOriginRedirects = TransportContract(
    name: "same-origin redirects: 302 GET, 303 POST → GET, 307 POST and 308 PUT keep body and token"
  ) { make, environment in
    let backend = try #require(environment?.backend)
    let transport = make(.satisfied)
    func redirect(_ status: Int, to target: String) throws -> URL {
      let query = "status=\(status)&to=\(target)"
      guard let url = URL(string: "\(backend.url.absoluteString)/__redirect?\(query)") else {
        throw URLError(.badURL)
      }
      return url
    }
    let (get, getBody) = try await transport.send(
      HTTPRequest(method: .get, url: redirect(302, to: "/health")))
    #expect(get.status == 200)
    #expect(String(decoding: getBody.bytes, as: UTF8.self).contains("true"))
    // /health answers 405 to a POST: a 200 means the 303 turned the POST into a GET.
    let (seeOther, _) = try await transport.send(
      HTTPRequest(
        method: .post, url: redirect(303, to: "/health"),
        headerFields: [.contentType: "application/json"]), body: .bytes(Data("{}".utf8)))
    #expect(seeOther.status == 200)
    // A token only comes back if the 307 re-sent the POST and its body.
    let (login, loginBody) = try await transport.send(
      HTTPRequest(
        method: .post, url: redirect(307, to: "/auth/token"),
        headerFields: [.contentType: "application/json"]),
      body: .bytes(Data(#"{"username":"alice","password":"secret"}"#.utf8)))
    #expect(login.status == 200)
    let object = try JSONSerialization.jsonObject(with: loginBody.bytes) as? [String: Any]
    let token = try #require(object?["access_token"] as? String)
    // 201 needs the Authorization field, the method and the body after the 308.
    let id = UUID().uuidString
    let (created, _) = try await transport.send(
      HTTPRequest(
        method: .put, url: redirect(308, to: "/articles/\(id)"),
        headerFields: [.authorization: "Bearer \(token)", .contentType: "application/json"]),
      body: .bytes(Data(#"{"title":"moved","body":"b"}"#.utf8)))
    #expect(created.status == 201)
  }

  static let otherOriginRedirect = TransportContract(
    name: "a redirect to another origin is returned, not followed"
  ) { make, environment in
    let backend = try #require(environment?.backend)
    let transport = make(.satisfied)
    // Same server, other host name: another origin, so the token must not go there.
    let elsewhere = "http://localhost:\(backend.port)/health"
    let url = try #require(
      URL(string: "\(backend.url.absoluteString)/__redirect?status=307&to=\(elsewhere)"))
    let (response, responseBody) = try await transport.send(
      HTTPRequest(method: .get, url: url, headerFields: [.authorization: "Bearer secret-token"]))
    #expect(response.status == 307)
    #expect(response.headerFields[.location] == elsewhere)
  }

  static let fileUploadRedirected = TransportContract(
    name: "a 307 on a file upload sends the whole file again to the new place"
  ) { make, environment in
    let backend = try #require(environment?.backend)
    let boundary = "contract-\(UUID().uuidString)"
    let payloadSize = 300 << 10
    let file = try Multipart.writeBodyFile(boundary: boundary, payloadSize: payloadSize)
    defer { try? FileManager.default.removeItem(at: file) }
    let url = try #require(
      URL(string: "\(backend.url.absoluteString)/__redirect?status=307&to=/upload"))
    let (response, responseBody) = try await make(.satisfied).send(
      HTTPRequest(
        method: .post, url: url,
        headerFields: [.contentType: "multipart/form-data; boundary=\(boundary)"]),
      body: .file(file), options: TransportOptions(deadline: .seconds(60)))
    #expect(response.status == 200)
    let parts = try JSONSerialization.jsonObject(with: responseBody.bytes) as? [[String: Any]]
    #expect(parts?.last?["size"] as? Int == payloadSize)
    #expect(parts?.last?["sha256"] as? String == Multipart.payloadSHA256(payloadSize))
  }

  /// `"Courier decodes gzip ✓ "` 100 times (2,500 bytes), gzip-compressed (67 bytes).
  static let gzipBody =
    Data(
      base64Encoded:
        "H4sIAAAAAAACA3POLy3KTC1SSElNzk9JLVZIr8osUHg0Z7KC86jEqMSoxKjEqMSoxKjEqMSoxGCVAAA2muphxAkAAA=="
    ) ?? Data()

  static let compressedResponse = TransportContract(
    name: "asks for compressed responses and hands back the decoded body"
  ) { make, _ in
    let head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Encoding: gzip\r\n"
      + "Content-Length: \(gzipBody.count)\r\nConnection: close\r\n\r\n"
    let server = try LoopbackServer(.bytes(Data(head.utf8) + gzipBody))
    defer { server.stop() }
    let (response, responseBody) = try await make(.satisfied).send(
      HTTPRequest(method: .get, url: server.url.appendingPathComponent("zipped")))
    #expect(response.status == 200)
    #expect(
      String(decoding: responseBody.bytes, as: UTF8.self)
        == String(repeating: "Courier decodes gzip ✓ ", count: 100))
    let fields = try #require(server.requestHeads.first).split(separator: "\r\n")
    let accept = fields.first { $0.hasPrefix("accept-encoding:") }
    #expect(accept?.contains("gzip") == true, "request head: \(fields)")
  }

  // MARK: helpers

  static func login(_ transport: any Transport, _ backend: ReferenceBackend) async throws
    -> String
  {
    let (response, responseBody) = try await transport.send(
      HTTPRequest(
        method: .post, url: backend.url.appendingPathComponent("auth/token"),
        headerFields: [.contentType: "application/json"]),
      body: .bytes(Data(#"{"username":"alice","password":"secret"}"#.utf8)))
    #expect(response.status == 200)
    let object = try JSONSerialization.jsonObject(with: responseBody.bytes) as? [String: Any]
    return try #require(object?["access_token"] as? String)
  }

  static func failure(
    of transport: any Transport, against behaviour: LoopbackServer.Behaviour,
    deadline: Duration = .seconds(10)
  ) async throws -> CourierError {
    let server = try LoopbackServer(behaviour)
    defer { server.stop() }
    return try await failure(
      of: transport, HTTPRequest(method: .get, url: server.url.appendingPathComponent("x")),
      deadline: deadline)
  }

  static func failure(
    of transport: any Transport, _ request: HTTPRequest, deadline: Duration = .seconds(10)
  ) async throws -> CourierError {
    do {
      let (response, _) = try await transport.send(
        request, options: TransportOptions(deadline: deadline))
      Issue.record("expected a failure, got status \(response.status)")
      return CourierError(.invalidInput)
    } catch let error as CourierError {
      return error
    }
  }
}

/// Progress reports, collected from any thread.
final class ProgressLog: Sendable {
  private let reports = Mutex<[TransferProgress]>([])
  func append(_ progress: TransferProgress) { reports.withLock { $0.append(progress) } }
  var values: [TransferProgress] { reports.withLock { $0 } }
}

/// Small multipart bodies for the contract, written by hand so the check depends on no encoder.
public enum Multipart {
  /// A text field part.
  /// - Parameters:
  ///   - name: the field name.
  ///   - value: the value.
  ///   - boundary: the boundary.
  /// - Returns: the part's bytes.
  public static func field(_ name: String, _ value: String, boundary: String) -> Data {
    Data(
      "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
  }

  /// The head of a file part, up to its content.
  /// - Parameters:
  ///   - name: the field name.
  ///   - filename: the file name.
  ///   - boundary: the boundary.
  /// - Returns: the bytes before the file's content.
  public static func fileHead(_ name: String, filename: String, boundary: String) -> Data {
    Data(
      ("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; "
        + "filename=\"\(filename)\"\r\nContent-Type: application/octet-stream\r\n\r\n").utf8)
  }

  /// The closing delimiter.
  /// - Parameters:
  ///   - boundary: the boundary.
  ///   - afterFile: whether to end a file part's content with its CRLF first.
  /// - Returns: the bytes.
  public static func close(_ boundary: String, afterFile: Bool = false) -> Data {
    Data("\(afterFile ? "\r\n" : "")--\(boundary)--\r\n".utf8)
  }

  /// A deterministic payload byte at an offset (not all one value, so a shifted byte shows).
  /// - Parameter offset: the offset.
  /// - Returns: the byte.
  public static func payloadByte(_ offset: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: offset &* 31 &+ 7)
  }

  /// The deterministic payload.
  /// - Parameter size: its length.
  /// - Returns: the bytes.
  public static func payload(_ size: Int) -> Data {
    Data((0..<size).map(payloadByte))
  }

  /// The payload's SHA-256, hex, computed with the system's `sha256sum`.
  /// - Parameter size: the payload's length.
  /// - Returns: the hex digest, or nil when it could not be computed.
  public static func payloadSHA256(_ size: Int) -> String? {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-payload-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    guard (try? payload(size).write(to: file)) != nil else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [file.path]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return nil }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init)
  }

  /// Writes a whole multipart body (a `title` field, then a `file` part holding the payload)
  /// to a temporary file.
  /// - Parameters:
  ///   - boundary: the boundary.
  ///   - payloadSize: the file part's length.
  /// - Returns: the file; the caller removes it.
  /// - Throws: when it cannot be written.
  public static func writeBodyFile(boundary: String, payloadSize: Int) throws -> URL {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-contract-\(UUID().uuidString).multipart")
    var body = field("title", "a title", boundary: boundary)
    body += fileHead("file", filename: "payload.bin", boundary: boundary)
    body += payload(payloadSize)
    body += close(boundary, afterFile: true)
    try body.write(to: file)
    return file
  }
}
