import CourierCurl
import CourierDomain
import CourierPorts
import CourierSystem
import CourierTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// What only the libcurl adapter offers: segmented bodies, downloads to a file, connection
/// reuse, a bounded response, cancellation under load. Serialized: some checks count sockets.
@Suite("CurlTransport", .contractBackends, .serialized)
struct CurlTransportTests {
  static func temporaryFile(_ data: Data) throws -> URL {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-curl-\(UUID().uuidString)")
    try data.write(to: file)
    return file
  }

  @Test("a multipart body streamed from memory parts and a range in the middle of a file")
  func segments() async throws {
    let backend = try #require(ContractEnvironment.current?.backend)
    let payloadSize = 5 << 20
    // The payload sits between 1,000 bytes of junk on each side: only the range may be sent.
    let junk = Data(repeating: 0x5A, count: 1000)
    let file = try Self.temporaryFile(junk + Multipart.payload(payloadSize) + junk)
    defer { try? FileManager.default.removeItem(at: file) }
    let boundary = "seg-\(UUID().uuidString)"
    let segments: [BodySegment] = [
      .bytes(Multipart.field("title", "from segments", boundary: boundary)),
      .bytes(Multipart.fileHead("file", filename: "p.bin", boundary: boundary)),
      .file(file, offset: 1000, length: Int64(payloadSize)),
      .bytes(Multipart.close(boundary, afterFile: true)),
    ]
    let reports = Mutex<[Int64]>([])
    let (response, responseBody) = try await CurlTransport().send(
      HTTPRequest(
        method: .post, url: backend.url.appendingPathComponent("upload"),
        headerFields: [.contentType: "multipart/form-data; boundary=\(boundary)"]),
      body: .segments(segments),
      options: TransportOptions(
        deadline: .seconds(60),
        progress: { progress in reports.withLock { $0.append(progress.sent) } }))
    #expect(response.status == 200)
    let parts = try JSONSerialization.jsonObject(with: responseBody.bytes) as? [[String: Any]]
    #expect(parts?.first?["value"] as? String == "from segments")
    #expect(parts?.last?["size"] as? Int == payloadSize)
    #expect(parts?.last?["sha256"] as? String == Multipart.payloadSHA256(payloadSize))
    #expect(reports.withLock { $0.last } == segments.totalLength)
    // No temp file: `upload(_:segments:)` has no body-file path at all (the read callback reads
    // the segments in place). Diffing the shared temp directory was tried and is racy: other
    // suites write body files there at the same time.
  }

  @Test("a 308 re-reads the segments from their sources for the new place")
  func segmentsRedirected() async throws {
    let backend = try #require(ContractEnvironment.current?.backend)
    let payloadSize = 1 << 20
    let file = try Self.temporaryFile(Multipart.payload(payloadSize))
    defer { try? FileManager.default.removeItem(at: file) }
    let boundary = "seg-\(UUID().uuidString)"
    let segments: [BodySegment] = [
      .bytes(Multipart.field("title", "moved", boundary: boundary)),
      .bytes(Multipart.fileHead("file", filename: "p.bin", boundary: boundary)),
      .file(file, offset: 0, length: Int64(payloadSize)),
      .bytes(Multipart.close(boundary, afterFile: true)),
    ]
    let url = try #require(
      URL(string: "\(backend.url.absoluteString)/__redirect?status=308&to=/upload"))
    let (response, responseBody) = try await CurlTransport().send(
      HTTPRequest(
        method: .post, url: url,
        headerFields: [.contentType: "multipart/form-data; boundary=\(boundary)"]),
      body: .segments(segments), options: TransportOptions(deadline: .seconds(60)))
    #expect(response.status == 200)
    let parts = try JSONSerialization.jsonObject(with: responseBody.bytes) as? [[String: Any]]
    #expect(parts?.first?["value"] as? String == "moved")
    #expect(parts?.last?["sha256"] as? String == Multipart.payloadSHA256(payloadSize))
  }

  @Test("a redirect loop ends after RedirectRule.maxHops with the last 3xx")
  func redirectLoop() async throws {
    // Every request, whatever its path, is sent back to /again: never a final answer.
    let server = try LoopbackServer(
      .raw(
        "HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
    defer { server.stop() }
    let (response, _) = try await CurlTransport().send(
      HTTPRequest(method: .get, url: server.url.appendingPathComponent("start")),
      options: TransportOptions(deadline: .seconds(30)))
    #expect(response.status == 302)
    #expect(response.headerFields[.location] == "/again")
    #expect(server.requestHeads.count == RedirectRule.maxHops + 1)
    #expect(server.requestHeads.last?.hasPrefix("get /again ") == true)
  }

  @Test("a bad segment is refused by name before anything is sent")
  func badSegments() async throws {
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    let file = try Self.temporaryFile(Data(count: 100))
    defer { try? FileManager.default.removeItem(at: file) }
    let missing = file.appendingPathExtension("missing")
    let cases: [([BodySegment], CourierError.Kind, String)] = [
      ([.file(missing, offset: 0, length: 1)], .fileUnavailable, missing.path),
      ([.bytes(Data("x".utf8)), .file(file, offset: 50, length: 51)], .fileUnavailable, file.path),
      ([.file(file, offset: -1, length: 10)], .invalidInput, file.path),
    ]
    let transport = CurlTransport()
    for (segments, kind, name) in cases {
      do {
        _ = try await transport.send(
          HTTPRequest(method: .post, url: server.url), body: .segments(segments),
          options: TransportOptions(deadline: .seconds(5)))
        Issue.record("expected a failure")
      } catch let error as CourierError {
        #expect(error.kind == kind)
        #expect(error.userMessage.contains(name))
      }
    }
    #expect(server.acceptedCount == 0)
  }

  @Test("a header value with a line break never smuggles a line")
  func headerInjection() async throws {
    // `HTTPFields` turns the CR and LF into spaces as the value is set (decision 2201): the
    // server gets one `X-Note` line and no `X-Evil` one.
    let server = try LoopbackServer(.raw(AuthOriginCheck.ok))
    defer { server.stop() }
    let note = try #require(HTTPField.Name("X-Note"))
    _ = try await CurlTransport().send(
      HTTPRequest(method: .get, url: server.url, headerFields: [note: "a\r\nX-Evil: 1"]))
    let head = try #require(server.requestHeads.first)
    let lines = head.split(separator: "\r\n")
    #expect(!lines.contains { $0.hasPrefix("x-evil") }, "\(head)")
    #expect(lines.contains("x-note: a  x-evil: 1"), "\(head)")
  }

  @Test("a response streamed to a file; a broken one leaves no file behind")
  func download() async throws {
    let body = String(repeating: "courier-", count: 40_000)
    let server = try LoopbackServer(
      .raw(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n"
          + "Connection: close\r\n\r\n\(body)"))
    defer { server.stop() }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-dl-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let destination = directory.appendingPathComponent("out.txt")
    let transport = CurlTransport()
    let seen = Mutex<Int64>(0)
    let response = try await transport.download(
      HTTPRequest(method: .get, url: server.url), to: destination,
      options: TransportOptions(deadline: .seconds(10)),
      progress: { progress in seen.withLock { $0 = progress.sent } })
    #expect(response.status == 200)
    #expect(try Data(contentsOf: destination) == Data(body.utf8))
    #expect(seen.withLock { $0 } == Int64(body.utf8.count))

    let broken = try LoopbackServer(.closeMidBody)
    defer { broken.stop() }
    let lost = directory.appendingPathComponent("lost.txt")
    await #expect(throws: CourierError.self) {
      _ = try await transport.download(
        HTTPRequest(method: .get, url: broken.url), to: lost,
        options: TransportOptions(deadline: .seconds(10)))
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.txt"])
  }

  @Test("a response over the memory bound fails as invalid, not as an out-of-memory")
  func boundedResponse() async throws {
    let body = String(repeating: "x", count: 10_000)
    let server = try LoopbackServer(
      .raw("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"))
    defer { server.stop() }
    let transport = CurlTransport(configuration: .init(maxResponseBytes: 1000))
    do {
      _ = try await transport.send(HTTPRequest(method: .get, url: server.url))
      Issue.record("expected a failure")
    } catch let error as CourierError {
      #expect(error.kind == .invalidResponse)
      #expect(error.underlying?.contains("1000") == true)
    }
  }

  @Test("sequential requests reuse one connection")
  func connectionReuse() async throws {
    let backend = try #require(ContractEnvironment.current?.backend)
    let transport = CurlTransport()
    let before = Sockets.connected(toPort: backend.port)
    for _ in 0..<25 {
      let (response, _) = try await transport.send(
        HTTPRequest(method: .get, url: backend.url.appendingPathComponent("health")))
      #expect(response.status == 200)
    }
    let opened = Sockets.connected(toPort: backend.port).subtracting(before)
    #expect(opened.count == 1)
    await transport.shutdown()
    #expect(Sockets.connected(toPort: backend.port).subtracting(before).isEmpty)
  }

  /// The name of the thread this runs on, as the kernel has it.
  static func threadName() -> String? {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  @Test("a task on the transport's executor is resumed on its thread, one request after another")
  func taskExecutor() async throws {
    let backend = try #require(ContractEnvironment.current?.backend)
    let transport = CurlTransport()
    let executor = try #require(transport.taskExecutor)
    let threads = try await withTaskExecutorPreference(executor) {
      var names: [String?] = []
      for _ in 0..<10 {
        let (response, _) = try await transport.send(
          HTTPRequest(method: .get, url: backend.url.appendingPathComponent("health")))
        #expect(response.status == 200)
        names.append(Self.threadName())
      }
      return names
    }
    #expect(threads == Array(repeating: "courier-curl", count: 10))
    // A send that hangs is still cancelled promptly from there.
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    let hung = Task {
      await withTaskExecutorPreference(executor) {
        do {
          _ = try await transport.send(HTTPRequest(method: .get, url: server.url))
          return CourierError.Kind?.none
        } catch {
          return (error as? CourierError)?.kind
        }
      }
    }
    // Cancelled once it is on its way (or before, on a machine too busy to start it in time).
    let deadline = ContinuousClock.now + .seconds(60)
    while transport.activeTransfers == 0, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(1))
    }
    hung.cancel()
    #expect(await hung.value == .cancelled)
    // After a shutdown the thread is gone; a task preferring it starts a new one.
    await transport.shutdown()
    let after = try await withTaskExecutorPreference(executor) {
      let (response, _) = try await transport.send(
        HTTPRequest(method: .get, url: backend.url.appendingPathComponent("health")))
      return (response.status, Self.threadName())
    }
    #expect(after.0 == 200 && after.1 == "courier-curl")
    await transport.shutdown()
    #expect(transport.activeTransfers == 0)
  }

  @Test(
    "a task yielding in a loop on the transport's thread does not starve its transfers",
    .timeLimit(.minutes(2)))
  func executorNotStarved() async throws {
    let backend = try #require(ContractEnvironment.current?.backend)
    let transport = CurlTransport()
    let executor = try #require(transport.taskExecutor)
    let done = Atomic<Bool>(false)
    let spins = Atomic<Int>(0)
    let spinner = Task {
      await withTaskExecutorPreference(executor) {
        while !done.load(ordering: .acquiring) {
          spins.add(1, ordering: .relaxed)
          await Task.yield()
        }
      }
    }
    // Sent from the pool while the spinner keeps the thread's inbox full.
    while spins.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(1)) }
    for _ in 0..<3 {
      let (response, _) = try await transport.send(
        HTTPRequest(method: .get, url: backend.url.appendingPathComponent("health")))
      #expect(response.status == 200)
    }
    done.store(true, ordering: .releasing)
    await spinner.value
    #expect(spins.load(ordering: .relaxed) > 0)
    await transport.shutdown()
  }

  @Test("a small body the server refuses early: a prompt answer, never a hang")
  func earlyRefusalSmallBody() async throws {
    let limited = try #require(ContractEnvironment.current?.limited)
    // Over the 1 MiB limit but below Expect's threshold when it is raised: sent without asking.
    let transport = CurlTransport(configuration: .init(expectContinueThreshold: 1 << 30))
    let start = ContinuousClock.now
    do {
      let (response, _) = try await transport.send(
        HTTPRequest(method: .post, url: limited.url.appendingPathComponent("upload")),
        body: .segments([.bytes(Data(count: (1 << 20) + 1))]),
        options: TransportOptions(deadline: .seconds(20)))
      #expect(response.status == 413)
    } catch let error as CourierError {
      #expect(error.kind == .connectionLost)
    }
    #expect(start.duration(to: .now) < .seconds(30), "a hang would never return")
  }

  @Test("cancelling many transfers at random points: each returns promptly, nothing leaks")
  func cancellationUnderLoad() async throws {
    let server = try LoopbackServer(.hang)
    defer { server.stop() }
    let size = 1 << 20
    let file = try Self.temporaryFile(Data(repeating: 0xFF, count: size))
    defer { try? FileManager.default.removeItem(at: file) }
    let transport = CurlTransport(configuration: .init(expectContinueThreshold: 1 << 30))
    var random = SeededRandom(seed: UInt64(ContinuousClock.now.hashValue & 0xFFFF))
    let plans = (0..<48).map { _ in CancelPlan.random(&random, total: Int64(size) + 3) }
    let outcomes = await withTaskGroup(of: CancelOutcome.self) { group in
      for plan in plans {
        group.addTask {
          await plan.run(transport, url: server.url, file: file, size: Int64(size))
        }
      }
      var all: [CancelOutcome] = []
      for await outcome in group { all.append(outcome) }
      return all
    }
    for outcome in outcomes {
      #expect(outcome.kind == .cancelled, "\(outcome.plan)")
      // Prompt, not instant: a hang would never return; 30 s leaves room for a busy machine.
      #expect(outcome.latency < .seconds(30), "\(outcome.plan)")
    }
    #expect(outcomes.count == plans.count)
    await transport.shutdown()
    #expect(transport.activeTransfers == 0)
    #expect(Sockets.connected(toPort: server.port).isEmpty)
    #expect(Sockets.descriptors(pointingAt: file.path) == 0)
    // No count of the whole descriptor table: other suites open and close descriptors at the
    // same time (a filtered run with the contract suites alongside went 9 over a 16 slack).
    // The two checks above name exactly what these transfers opened.
    // The transport still works after a shutdown: a new thread starts.
    let ok = try LoopbackServer(.raw("HTTP/1.1 204 No Content\r\n\r\n"))
    defer { ok.stop() }
    let (response, _) = try await transport.send(HTTPRequest(method: .get, url: ok.url))
    #expect(response.status == 204)
  }
}

/// Where one transfer of the cancellation test is cancelled.
struct CancelPlan: Sendable, CustomStringConvertible {
  enum Point: Sendable {
    case beforeStart
    case afterYields(Int)
    case afterSending(Int64)
  }
  let point: Point

  var description: String { "cancel \(point)" }

  static func random(_ random: inout SeededRandom, total: Int64) -> CancelPlan {
    switch random.next() % 3 {
    case 0: return CancelPlan(point: .beforeStart)
    case 1: return CancelPlan(point: .afterYields(Int(random.next() % 200)))
    default: return CancelPlan(point: .afterSending(Int64(random.next() % UInt64(total + 1))))
    }
  }

  func run(_ transport: CurlTransport, url: URL, file: URL, size: Int64) async -> CancelOutcome {
    let reached = Trigger()
    var threshold = Int64.max
    if case .afterSending(let bytes) = point { threshold = bytes }
    let limit = threshold
    let task = Task {
      try await transport.send(
        HTTPRequest(method: .post, url: url),
        body: .segments([
          .bytes(Data("a".utf8)), .file(file, offset: 0, length: size), .bytes(Data("bc".utf8)),
        ]),
        options: TransportOptions(
          deadline: nil, progress: { progress in if progress.sent >= limit { reached.fire() } }))
    }
    switch point {
    case .beforeStart: break
    case .afterYields(let count): for _ in 0..<count { await Task.yield() }
    case .afterSending: await reached.wait(atMost: .seconds(20))
    }
    let start = ContinuousClock.now
    task.cancel()
    let result = await task.result
    let latency = start.duration(to: .now)
    switch result {
    case .success(let response):
      return CancelOutcome(plan: self, kind: nil, status: response.0.status.code, latency: latency)
    case .failure(let error):
      return CancelOutcome(
        plan: self, kind: (error as? CourierError)?.kind, status: nil, latency: latency)
    }
  }
}

struct CancelOutcome: Sendable {
  let plan: CancelPlan
  let kind: CourierError.Kind?
  let status: Int?
  let latency: Duration
}

/// Fires once; a waiter returns when it has fired or after a bound.
final class Trigger: Sendable {
  private let state = Mutex<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

  func fire() {
    let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
      guard !state.fired else { return nil }
      state.fired = true
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume()
  }

  func wait(atMost bound: Duration) async {
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        await withCheckedContinuation { continuation in
          let now = self.state.withLock { state -> Bool in
            if state.fired { return true }
            state.waiter = continuation
            return false
          }
          if now { continuation.resume() }
        }
      }
      group.addTask { try? await Task.sleep(for: bound) }
      await group.next()
      self.fire()  // releases the first child if the bound won
      group.cancelAll()
    }
  }
}

/// A small deterministic generator (SplitMix64), so a failing run can be replayed by its seed.
struct SeededRandom {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// This process's descriptors, read from /proc.
enum Sockets {
  /// The local ports of this process's TCP sockets connected to a loopback port.
  static func connected(toPort port: Int) -> Set<Int> {
    let inodes = socketInodes()
    var ports: Set<Int> = []
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
      // procfs hands out one page per read: read to the end, not by the (zero) file size.
      guard let handle = FileHandle(forReadingAtPath: table) else { continue }
      let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
      try? handle.close()
      for line in text.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 9, let remote = fields[2].split(separator: ":").last,
          Int(remote, radix: 16) == port, let local = fields[1].split(separator: ":").last,
          let localPort = Int(local, radix: 16), let inode = Int(fields[9]), inodes.contains(inode)
        else { continue }
        ports.insert(localPort)
      }
    }
    return ports
  }

  static func socketInodes() -> Set<Int> {
    var inodes: Set<Int> = []
    for target in links() where target.hasPrefix("socket:[") {
      if let inode = Int(target.dropFirst(8).dropLast()) { inodes.insert(inode) }
    }
    return inodes
  }

  static func descriptors(pointingAt path: String) -> Int {
    links().filter { $0 == path }.count
  }

  static func links() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.compactMap {
      try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
    }
  }
}

/// `Expect: 100-continue` decided per request (decision 1303).
@Suite("CurlTransport Expect")
struct CurlExpectTests {
  @Test("a large body asks first, except a tus PATCH to an origin that already answered")
  func expectPerRequest() async throws {
    let server = try LoopbackServer(
      .raw("HTTP/1.1 204 No Content\r\nUpload-Offset: 1\r\nConnection: close\r\n\r\n"))
    defer { server.stop() }
    let transport = CurlTransport()
    let body = RequestBody.bytes(Data(count: 128 * 1024))
    let patch = HTTPRequest(
      method: .patch, url: server.url.appendingPathComponent("files/1"),
      headerFields: [.contentType: "application/offset+octet-stream", .uploadOffset: "0"])
    let post = HTTPRequest(method: .post, url: server.url.appendingPathComponent("photos"))
    let options = TransportOptions(deadline: .seconds(60))
    // The first request to the origin asks; the next PATCH does not; a POST still does.
    for request in [patch, patch, post] {
      #expect(try await transport.send(request, body: body, options: options).0.status == 204)
    }
    let heads = server.requestHeads
    #expect(heads.count == 3)
    #expect(heads.first?.contains("expect: 100-continue") == true, "\(heads)")
    #expect(heads.dropFirst().first?.contains("expect") == false, "\(heads)")
    #expect(heads.last?.contains("expect: 100-continue") == true, "\(heads)")
    await transport.shutdown()
  }
}
