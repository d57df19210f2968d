import CourierCore
import CourierDomain
import CourierPorts
import CourierTestKit
import CourierTestSupport
import Foundation
import Logging
import Synchronization
import Testing

final class StateLog: Sendable {
  private let states = Mutex<[UploadState]>([])
  func append(_ state: UploadState) { states.withLock { $0.append(state) } }
  var all: [UploadState] { states.withLock { $0 } }
  var retries: [Int] {
    all.compactMap { if case .retrying(let attempt, _, _, _) = $0.phase { attempt } else { nil } }
  }
  var verdict: CompressionDecision.Verdict? {
    all.lazy.compactMap { if case .prepared(let verdict) = $0.phase { verdict } else { nil } }.first
  }
  var compressed: Bool { all.contains(.compressing) }
}

@Suite("Uploader")
struct UploaderTests {
  let target = URL(string: "http://127.0.0.1:9/photos") ?? URL(fileURLWithPath: "/")
  static let jpegHeader = Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16]) + Data("JFIF".utf8)

  static func photoInfo(location: Bool = false, edge: Int = 4000) -> ImageInfo {
    ImageInfo(
      format: .jpeg, width: edge, height: edge * 3 / 4, hasLocation: location,
      hasMetadata: location, byteCount: 0)
  }

  /// A fresh directory for the test's inputs and one for the uploader's temporary files.
  struct Directories {
    let inputs: URL
    let temporary: URL

    init() throws {
      let root = FileManager.default.temporaryDirectory.appendingPathComponent(
        "courier-uploader-\(UUID())")
      inputs = root.appendingPathComponent("in")
      temporary = root.appendingPathComponent("tmp")
      for url in [inputs, temporary] {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
      }
    }

    func file(_ name: String, _ data: Data) throws -> URL {
      let url = inputs.appendingPathComponent(name)
      try data.write(to: url)
      return url
    }

    var leftovers: [String] {
      (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
    }

    func remove() {
      try? FileManager.default.removeItem(at: inputs.deletingLastPathComponent())
    }
  }

  func retrying(_ base: any Transport, clock: ManualClock) -> RetryingTransport<ManualClock> {
    RetryingTransport(
      base,
      executor: RetryExecutor(policy: RetryPolicy(), clock: clock, random: FixedRandomSource(0.5)))
  }

  func uploader(
    _ transport: any Transport, _ compressor: any ImageCompressor, _ dirs: Directories
  ) -> Uploader {
    Uploader(
      transport: transport, compressor: compressor, temporaryDirectory: dirs.temporary,
      progressGranularity: 0)
  }

  @Test("503, 503, 201: three attempts, one key, the same bytes each time, temp files removed")
  func retriesWithOneKey() async throws {
    let dirs = try Directories()
    defer { dirs.remove() }
    let file = try dirs.file("beach.jpg", Self.jpegHeader + Data(count: 5000))
    let script = InMemoryTransport()
    script.enqueue(status: 503, json: #"{"code":"unavailable","message":"busy"}"#)
    script.enqueue(status: 503, json: #"{"code":"unavailable","message":"busy"}"#)
    script.enqueue(status: 201, json: #"{"id":"p1"}"#)
    let clock = ManualClock()
    let compressor = InMemoryImageCompressor(
      info: Self.photoInfo(location: true), behavior: .produce(Data("SMALLJPEG".utf8)))
    let log = StateLog()
    let upload = uploader(retrying(script, clock: clock), compressor, dirs)
    let task = Task {
      try await upload.perform(
        UploadRequest(file: file, target: target, fields: [.text("album", "summer")])
      ) { log.append($0) }
    }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(2))
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(3))
    let result = try await task.value

    #expect(result.response.status == 201)
    #expect(result.attempts == 3)
    #expect(log.retries == [1, 2])
    #expect(log.compressed)
    #expect(result.verdict.send == .compressed)
    let requests = script.requests
    #expect(requests.count == 3)
    #expect(
      Set(requests.compactMap { $0.headerFields[.idempotencyKey] }) == [result.idempotencyKey])
    #expect(Set(requests.compactMap { $0.headerFields[.contentType] }).count == 1)
    let bodies = script.receivedBodies
    #expect(Set(bodies.compactMap { $0 }).count == 1)
    let body = String(decoding: try #require(bodies.first ?? nil), as: UTF8.self)
    #expect(body.contains("name=\"title\"\r\n\r\nbeach.jpg\r\n"))
    #expect(body.contains("name=\"album\"\r\n\r\nsummer\r\n"))
    #expect(body.contains("filename=\"beach.jpg\"\r\nContent-Type: image/jpeg\r\n\r\nSMALLJPEG"))
    #expect(Int64(try #require(bodies.first ?? nil).count) == result.bodyLength)
    #expect(dirs.leftovers.isEmpty)
  }

  @Test("without segments, a body over the threshold goes through one file, removed afterwards")
  func bodyFileReusedAcrossAttempts() async throws {
    let dirs = try Directories()
    defer { dirs.remove() }
    let file = try dirs.file("big.bin", Data(repeating: 7, count: 1_500_000))
    let script = InMemoryTransport()
    script.enqueue(status: 500, json: #"{"code":"internal","message":"oops"}"#)
    script.enqueue(status: 201, json: #"{"id":"p2"}"#)
    let clock = ManualClock()
    let compressor = InMemoryImageCompressor(info: nil)
    let upload = Uploader(
      transport: retrying(script, clock: clock), compressor: compressor,
      temporaryDirectory: dirs.temporary, allowSegments: false, progressGranularity: 0)
    let sizes = Mutex<[Int64]>([])
    let task = Task {
      try await upload.perform(UploadRequest(file: file, target: target)) { state in
        if case .uploading(_, let total) = state.phase { sizes.withLock { $0.append(total) } }
      }
    }
    await clock.waitForSleepers(1)
    let during = dirs.leftovers
    clock.advance(by: .seconds(2))
    let result = try await task.value
    #expect(result.response.status == 201)
    #expect(during.count == 1)
    #expect(script.uploadedFiles.count == 2)
    #expect(Set(script.uploadedFiles).count == 1)
    #expect(sizes.withLock { $0 }.allSatisfy { $0 == result.bodyLength })
    #expect(result.bodyLength > 1_500_000)
    #expect(compressor.compressCount == 0)
    #expect(dirs.leftovers.isEmpty)
  }

  @Test("the body is streamed in segments through every decorator, without a body file")
  func streamsSegmentsThroughDecorators() async throws {
    let dirs = try Directories()
    defer { dirs.remove() }
    let content = Data(repeating: 42, count: 1_500_000)
    let file = try dirs.file("notes.txt", content)
    let script = InMemoryTransport()
    script.enqueue(status: 503, json: #"{"code":"unavailable","message":"busy"}"#)
    script.enqueue(status: 201, json: #"{"id":"p3"}"#)
    let clock = ManualClock()
    let (logger, log) = Logger.recording()
    let stack = retrying(
      AuthTransport(
        LoggingTransport(script),
        store: InMemoryCredentialStore(Credentials(accessToken: "t")), refreshURL: target),
      clock: clock)
    let upload = Uploader(
      transport: stack, compressor: InMemoryImageCompressor(info: nil),
      options: TransportOptions(logger: logger), temporaryDirectory: dirs.temporary,
      progressGranularity: 0)
    let task = Task { try await upload.perform(UploadRequest(file: file, target: target)) { _ in } }
    await clock.waitForSleepers(1)
    #expect(dirs.leftovers.isEmpty)
    clock.advance(by: .seconds(2))
    let result = try await task.value
    #expect(result.response.status == 201)
    #expect(script.uploadedFiles.isEmpty)
    #expect(
      script.bodies.allSatisfy { body in
        if case .segments = body?.contents { return true }
        return false
      })
    let bodies = script.receivedBodies.compactMap { $0 }
    #expect(bodies.count == 2)
    #expect(Set(bodies).count == 1)
    #expect(Int64(bodies[0].count) == result.bodyLength)
    #expect(bodies[0].range(of: content) != nil)
    #expect(script.requests.allSatisfy { $0.headerFields[.authorization] == "Bearer t" })
    #expect(Set(script.requests.compactMap { $0.headerFields[.idempotencyKey] }).count == 1)
    // Each attempt's request and answer, logged by the step next to the transport.
    let exchanges = log.entries.filter { $0.text.hasPrefix("→") || $0.text.hasPrefix("←") }
    #expect(exchanges.count == 4)
  }

  @Test("422 image_too_large: one attempt, the server's message, no retry")
  func businessRefusal() async throws {
    let dirs = try Directories()
    defer { dirs.remove() }
    let file = try dirs.file("huge.jpg", Self.jpegHeader + Data(count: 100))
    let script = InMemoryTransport()
    script.enqueue(
      status: 422, json: #"{"code":"image_too_large","message":"The image is over 10 MB."}"#)
    let log = StateLog()
    let upload = uploader(
      retrying(script, clock: ManualClock()), InMemoryImageCompressor(info: Self.photoInfo()), dirs)
    await #expect {
      _ = try await upload.perform(UploadRequest(file: file, target: target)) { log.append($0) }
    } throws: { error in
      let failure = error as? CourierError
      return failure?.kind == .business && failure?.code == "image_too_large"
        && failure?.attempts == 1 && failure?.userMessage == "The image is over 10 MB."
    }
    #expect(script.requests.count == 1)
    #expect(log.retries.isEmpty)
    #expect(dirs.leftovers.isEmpty)
  }

  @Test("a missing file fails with fileUnavailable naming it, before any request")
  func missingFile() async throws {
    let dirs = try Directories()
    defer { dirs.remove() }
    let script = InMemoryTransport()
    let compressor = InMemoryImageCompressor(info: Self.photoInfo())
    let upload = uploader(script, compressor, dirs)
    let missing = dirs.inputs.appendingPathComponent("gone.jpg")
    await #expect {
      _ = try await upload.perform(UploadRequest(file: missing, target: target)) { _ in }
    } throws: { error in
      let failure = error as? CourierError
      return failure?.kind == .fileUnavailable && failure?.userMessage.contains("gone.jpg") == true
    }
    #expect(script.requests.isEmpty)
    #expect(compressor.inspectedFiles.isEmpty)
  }

  struct VerdictCase: Sendable, CustomTestStringConvertible {
    let name: String
    let compress: Bool
    let info: ImageInfo?
    let behavior: InMemoryImageCompressor.Behavior
    let reason: CompressionDecision.Reason
    let sentType: String?
    var testDescription: String { name }
  }

  static let verdictCases: [VerdictCase] = [
    VerdictCase(
      name: "not an image", compress: true, info: nil, behavior: .produce(Data()),
      reason: .notAnImage, sentType: "image/jpeg"),
    VerdictCase(
      name: "--no-compress", compress: false, info: photoInfo(), behavior: .produce(Data()),
      reason: .compressionDisabled, sentType: "image/jpeg"),
    VerdictCase(
      name: "compression failed, no location", compress: true, info: photoInfo(),
      behavior: .fail(CourierError(.invalidInput, code: "corrupt_image")),
      reason: .compressionFailed, sentType: "image/jpeg"),
    VerdictCase(
      name: "compressed bigger than a fine original", compress: true, info: photoInfo(edge: 800),
      behavior: .produce(Data(count: 10_000)), reason: .compressedNotSmaller,
      sentType: "image/jpeg"),
    VerdictCase(
      name: "compression failed with location", compress: true, info: photoInfo(location: true),
      behavior: .fail(CourierError(.invalidInput, code: "corrupt_image")),
      reason: .originalHasLocation, sentType: nil),
  ]

  @Test("the original is sent (or not) and the reason is reported", arguments: verdictCases)
  func originalSent(_ row: VerdictCase) async throws {
    let dirs = try Directories()
    defer { dirs.remove() }
    let original = Self.jpegHeader + Data(repeating: 1, count: 300)
    let file = try dirs.file("pic.jpg", original)
    let script = InMemoryTransport()
    script.enqueue(status: 201, json: #"{"id":"p"}"#)
    let log = StateLog()
    let upload = uploader(
      script, InMemoryImageCompressor(info: row.info, behavior: row.behavior), dirs)
    let outcome: Result<UploadResult, any Error>
    do {
      outcome = .success(
        try await upload.perform(
          UploadRequest(file: file, target: target, compress: row.compress)
        ) { log.append($0) })
    } catch {
      outcome = .failure(error)
    }
    #expect(log.verdict?.reason == row.reason)
    #expect(log.verdict?.message.contains("pic.jpg") == true)
    if let sentType = row.sentType {
      let result = try outcome.get()
      let body = try #require(script.receivedBodies.first ?? nil)
      #expect(body.range(of: original) != nil)
      #expect(body.range(of: Data("Content-Type: \(sentType)".utf8)) != nil)
      #expect(result.verdict.send == .original)
    } else {
      #expect(throws: CourierError.self) { _ = try outcome.get() }
      #expect(script.requests.isEmpty)
    }
    #expect(dirs.leftovers.isEmpty)
  }

  /// Issue 14: `--no-compress` pays for no image library. The adapter's `inspect` is what loads
  /// libvips; without a compression it is not called, and the message says what that means.
  @Test("--no-compress does not read the image: no inspect, any location data goes along")
  func noCompressReadsNothing() async throws {
    let dirs = try Directories()
    defer { dirs.remove() }
    let original = Self.jpegHeader + Data(repeating: 1, count: 300)
    let file = try dirs.file("pic.jpg", original)
    let script = InMemoryTransport()
    script.enqueue(status: 201, json: #"{"id":"p"}"#)
    let compressor = InMemoryImageCompressor(
      info: Self.photoInfo(location: true), behavior: .produce(Data()))
    let log = StateLog()
    let result = try await uploader(script, compressor, dirs).perform(
      UploadRequest(file: file, target: target, compress: false)
    ) { log.append($0) }
    #expect(compressor.inspectedFiles.isEmpty)
    #expect(result.verdict.send == .original)
    #expect(
      log.verdict?.message
        == "pic.jpg is sent as is (compression turned off, any location data included).")
    let body = try #require(script.receivedBodies.first ?? nil)
    #expect(body.range(of: original) != nil)
  }

  @Test("a text file is sent as is, with its own media type")
  func nonImageKeepsItsType() async throws {
    let dirs = try Directories()
    defer { dirs.remove() }
    let file = try dirs.file("notes.txt", Data("hello\n".utf8))
    let script = InMemoryTransport()
    script.enqueue(status: 201, json: #"{"id":"p"}"#)
    let compressor = InMemoryImageCompressor(info: Self.photoInfo())
    let result = try await uploader(script, compressor, dirs).perform(
      UploadRequest(file: file, target: target)
    ) { _ in }
    #expect(result.verdict.reason == .notAnImage)
    #expect(compressor.compressCount == 0)
    let body = String(decoding: try #require(script.receivedBodies.first ?? nil), as: UTF8.self)
    #expect(body.contains("filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\n"))
  }

  @Test("cancelled while waiting to retry: stops, no further attempt, temp files removed")
  func cancellationDuringBackoff() async throws {
    let dirs = try Directories()
    defer { dirs.remove() }
    let file = try dirs.file("beach.jpg", Self.jpegHeader + Data(count: 100))
    let script = InMemoryTransport()
    script.enqueue(status: 503, json: #"{"code":"unavailable","message":"busy"}"#)
    let clock = ManualClock()
    let upload = uploader(
      retrying(script, clock: clock), InMemoryImageCompressor(info: Self.photoInfo()), dirs)
    let states = upload.states(for: UploadRequest(file: file, target: target))
    let consumer = Task { () -> [UploadState] in
      var seen: [UploadState] = []
      do {
        for try await state in states { seen.append(state) }
      } catch {
        seen.append(.failed(CourierError.wrapping(error)))
      }
      return seen
    }
    await clock.waitForSleepers(1)
    #expect(dirs.leftovers.count == 1)
    consumer.cancel()
    let seen = await consumer.value
    #expect(script.requests.count == 1)
    #expect(seen.contains { if case .retrying = $0.phase { true } else { false } })
    #expect(!seen.contains { if case .succeeded = $0.phase { true } else { false } })
    // The upload's own task may still be unwinding: wait for that condition, bounded.
    let end = ContinuousClock.now + .seconds(30)
    while !dirs.leftovers.isEmpty && ContinuousClock.now < end {
      try await Task.sleep(for: .milliseconds(5))
    }
    #expect(dirs.leftovers.isEmpty)
  }

  @Test("the state stream ends with succeeded after compressing and uploading")
  func stateStreamOrder() async throws {
    let dirs = try Directories()
    defer { dirs.remove() }
    let file = try dirs.file("beach.jpg", Self.jpegHeader + Data(count: 100))
    let script = InMemoryTransport()
    script.enqueue(status: 201, json: #"{"id":"p9"}"#)
    let upload = uploader(script, InMemoryImageCompressor(info: Self.photoInfo()), dirs)
    var seen: [UploadState] = []
    for try await state in upload.states(for: UploadRequest(file: file, target: target)) {
      seen.append(state)
    }
    #expect(seen.first == .compressing)
    guard case .succeeded(let result) = try #require(seen.last).phase else {
      Issue.record("last state is \(String(describing: seen.last))")
      return
    }
    #expect(String(decoding: result.responseBody.bytes, as: UTF8.self) == #"{"id":"p9"}"#)
    #expect(seen.contains(.uploading(sent: result.bodyLength, total: result.bodyLength)))
  }
}
