import CourierCore
import CourierDomain
import CourierPorts
import CourierSystem
import CourierTestKit
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// `DraftUploader` against an IETF draft server in memory: the 104 heard through the
/// transport's observer, a cut creation resumed with HEAD and PATCH, a 409 mismatch answered
/// by asking the offset again, and a transport that hides interim answers.
@Suite("DraftUploader")
struct DraftUploaderTests {
  /// A draft server in memory that stores the bytes each request's body carries.
  final class FakeDraft: Transport, Sendable {
    struct State {
      var stored = Data()
      var whole = Data()
      var methods: [String] = []
      /// Bytes of the creation's body stored before its connection is lost; nil: none lost.
      var cutCreationAt: Int?
      /// Bytes a ghost request adds before the next PATCH, answered 409.
      var ghostBeforePatch: Int?
      /// Whether the transport tells interim answers (curl) or hides them (URLSession).
      var tellsInterim = true
      /// The creation's `Repr-Digest`.
      var reprDigest: String?
      /// Bytes of the next creations' bodies stored before their connection is lost, in turn.
      var laterCuts: [Int] = []
      /// The answer to the next `HEAD`s instead of the offset, in turn.
      var headAnswers: [HTTPResponse] = []
      /// The answer to every creation instead of storing it.
      var creationAnswer: (HTTPResponse, Data)?
      /// The most bytes one append may carry (a 413 naming it past that); nil: no limit.
      var appendLimit: Int?
      /// The sizes of the appends' bodies.
      var appends: [Int] = []
      /// Each append advances it by its bytes at `rate` bytes per second.
      var clock: ManualClock?
      var rate = 4_000_000
      /// The interop versions creations may name (a 400 problem listing them otherwise); nil:
      /// any.
      var accepted: [Int]?
      /// The interop version each request named, in order.
      var versions: [String] = []
      /// Each append's completeness fields.
      var appendFields: [HTTPFields] = []
    }
    let state = Mutex(State())

    static func read(_ body: RequestBody?) throws -> Data {
      var data = Data()
      guard case .segments(let segments)? = body?.contents else { return data }
      for segment in segments { try segment.read { data.append($0) } }
      return data
    }

    func send(_ request: HTTPRequest, body: RequestBody?, options: TransportOptions)
      async throws -> (HTTPResponse, ResponseBody)
    {
      let content = try Self.read(body)
      let method = request.method.rawValue
      let json = ResponseBody(bytes: Data(#"{"id":"p1"}"#.utf8))
      let version = request.headerFields[.uploadDraftInteropVersion] ?? ""
      state.withLock {
        $0.methods.append(method)
        $0.versions.append(version)
      }
      switch method {
      case "POST":
        if let (head, bytes) = state.withLock({ $0.creationAnswer }) {
          return (head, ResponseBody(bytes: bytes))
        }
        if let accepted = state.withLock({ $0.accepted }),
          !accepted.contains(Int(version) ?? -1)
        {
          let problem =
            #"{"type":"urn:courier:problem:unsupported-interop-version","status":400,"#
            + #""supported":\#(accepted)}"#
          return (
            HTTPResponse(status: 400, headerFields: [.contentType: "application/problem+json"]),
            ResponseBody(bytes: Data(problem.utf8))
          )
        }
        let (cut, tells) = state.withLock { state -> (Int?, Bool) in
          state.stored = Data()
          state.whole = content
          state.reprDigest = request.headerFields[.reprDigest]
          let cut = state.cutCreationAt
          state.cutCreationAt = state.laterCuts.isEmpty ? nil : state.laterCuts.removeFirst()
          return (cut, state.tellsInterim)
        }
        if tells, !version.isEmpty {
          options.informational?(
            HTTPResponse(
              status: 104,
              headerFields: [.location: "/resumable/1", .uploadDraftInteropVersion: version]))
        }
        if let cut {
          state.withLock { $0.stored = content.prefix(cut) }
          throw CourierError(.connectionLost, mayHaveReachedServer: true)
        }
        state.withLock { $0.stored = content }
        return (HTTPResponse(status: 201, headerFields: [.uploadComplete: "?1"]), json)
      case "HEAD":
        let given = state.withLock { state in
          state.headAnswers.isEmpty ? nil : state.headAnswers.removeFirst()
        }
        if let given { return (given, ResponseBody()) }
        let offset = state.withLock { $0.stored.count }
        // Interop 3 names completeness with Upload-Incomplete (absent would mean complete).
        var fields = HTTPFields()
        fields[.uploadOffset] = String(offset)
        fields[version == "3" ? .uploadIncomplete : .uploadComplete] = version == "3" ? "?1" : "?0"
        return (HTTPResponse(status: 204, headerFields: fields), ResponseBody())
      case "PATCH":
        let from = Int(request.headerFields[.uploadOffset] ?? "") ?? -1
        return state.withLock { state in
          state.appends.append(content.count)
          state.appendFields.append(request.headerFields)
          if let limit = state.appendLimit, content.count > limit {
            return (
              HTTPResponse(status: 413, headerFields: [.uploadLimit: "max-append-size=\(limit)"]),
              ResponseBody()
            )
          }
          state.clock?.advance(by: .seconds(Double(content.count) / Double(state.rate)))
          if let ghost = state.ghostBeforePatch {
            state.ghostBeforePatch = nil
            state.stored = state.whole.prefix(state.stored.count + ghost)
          }
          guard from == state.stored.count else {
            let problem =
              #"{"type":"https://iana.org/assignments/http-problem-types#"#
              + #"mismatching-upload-offset","status":409}"#
            return (
              HTTPResponse(
                status: 409,
                headerFields: [
                  .contentType: "application/problem+json",
                  .uploadOffset: String(state.stored.count),
                ]),
              ResponseBody(bytes: Data(problem.utf8))
            )
          }
          state.stored.append(content)
          let done =
            request.headerFields[.uploadComplete] == "?1"
            || request.headerFields[.uploadIncomplete] == "?0"
          return done
            ? (HTTPResponse(status: 200, headerFields: [.uploadComplete: "?1"]), json)
            : (
              HTTPResponse(
                status: 204,
                headerFields: [.uploadOffset: String(state.stored.count), .uploadComplete: "?0"]),
              ResponseBody()
            )
        }
      default:
        return (HTTPResponse(status: 405), ResponseBody())
      }
    }
  }

  func uploader(
    _ server: FakeDraft, clock: ManualClock = ManualClock(), interop: IETFInterop? = nil
  ) -> DraftUploader<ManualClock> {
    var uploader = DraftUploader(
      transport: server,
      executor: RetryExecutor(
        policy: RetryPolicy(maxAttempts: 3, baseDelay: .zero, deadline: nil),
        clock: clock, random: FixedRandomSource(0)),
      compressor: InMemoryImageCompressor(info: nil), store: nil)
    uploader.interop = interop
    return uploader
  }

  func file(_ size: Int) throws -> URL {
    let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 3) })
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-draft-\(UUID()).bin")
    try data.write(to: url)
    return url
  }

  func request(_ url: URL) -> UploadRequest {
    UploadRequest(
      file: url, target: URL(string: "http://server/photos") ?? url, compress: false,
      confirmation: .status)
  }

  @Test("a creation cut after the 104 resumes: HEAD, then a PATCH of the rest only")
  func cutCreationResumes() async throws {
    let server = FakeDraft()
    server.state.withLock { $0.cutCreationAt = 3000 }
    let url = try file(8000)
    defer { try? FileManager.default.removeItem(at: url) }
    let resumed = Mutex<Int64?>(nil)
    let result = try await uploader(server).perform(
      request(url), onState: { _ in }, onResume: { offset, _ in resumed.withLock { $0 = offset } })
    let state = server.state.withLock { $0 }
    #expect(state.methods == ["POST", "HEAD", "PATCH"])
    #expect(state.stored == state.whole)
    #expect(resumed.withLock { $0 } == 3000)
    #expect(result.uploadURL?.absoluteString == "http://server/resumable/1")
    #expect(result.resumedAt == 3000)
    // The whole form's digest went with the creation (RFC 9530), for the server to check.
    let digest = SHA256.hash(state.whole)
    #expect(state.reprDigest == "sha-256=:\(Data(digest).base64EncodedString()):")
  }

  @Test("a 409 mismatching-upload-offset: the offset is asked again and the rest sent from it")
  func mismatchReasks() async throws {
    let server = FakeDraft()
    server.state.withLock {
      $0.cutCreationAt = 2000
      $0.ghostBeforePatch = 500
    }
    let url = try file(6000)
    defer { try? FileManager.default.removeItem(at: url) }
    _ = try await uploader(server).perform(request(url), onState: { _ in })
    let state = server.state.withLock { $0 }
    #expect(state.methods == ["POST", "HEAD", "PATCH", "HEAD", "PATCH"])
    #expect(state.stored == state.whole)
  }

  @Test("no interim answer heard (URLSession): a cut upload is posted again whole")
  func withoutTheOfferItIsPlain() async throws {
    let server = FakeDraft()
    server.state.withLock {
      $0.cutCreationAt = 2000
      $0.tellsInterim = false
    }
    let url = try file(5000)
    defer { try? FileManager.default.removeItem(at: url) }
    let result = try await uploader(server).perform(request(url), onState: { _ in })
    let state = server.state.withLock { $0 }
    #expect(state.methods == ["POST", "POST"])
    #expect(state.stored == state.whole)
    #expect(result.uploadURL == nil)
  }

  /// A file cut at `cut` on its creation, uploaded with `server`.
  func cutUpload(
    _ server: FakeDraft, size: Int, cut: Int, clock: ManualClock = ManualClock(),
    interop: IETFInterop? = nil
  ) async throws -> UploadResult {
    server.state.withLock { $0.cutCreationAt = cut }
    let url = try file(size)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await uploader(server, clock: clock, interop: interop).perform(
      request(url), onState: { _ in })
  }

  @Test("a HEAD that says complete at another length: stopped, nothing more sent")
  func lengthMismatch() async throws {
    let server = FakeDraft()
    server.state.withLock {
      $0.headAnswers = [
        HTTPResponse(status: 204, headerFields: [.uploadOffset: "10", .uploadComplete: "?1"])
      ]
    }
    let error = await #expect(throws: CourierError.self) {
      try await cutUpload(server, size: 4000, cut: 1000)
    }
    #expect(error?.code == "ietf_length_mismatch")
    #expect(error?.kind == .invalidResponse)
    #expect(server.state.withLock { $0.methods } == ["POST", "HEAD"])
  }

  @Test("the upload deleted on the server (404): a new one from byte 0, once; twice is gone")
  func uploadDeleted() async throws {
    let server = FakeDraft()
    server.state.withLock { $0.headAnswers = [HTTPResponse(status: 404)] }
    _ = try await cutUpload(server, size: 4000, cut: 1000)
    var state = server.state.withLock { $0 }
    #expect(state.methods == ["POST", "HEAD", "POST"])
    #expect(state.stored == state.whole)

    let twice = FakeDraft()
    twice.state.withLock {
      $0.laterCuts = [1500]
      $0.headAnswers = [HTTPResponse(status: 410), HTTPResponse(status: 404)]
    }
    let error = await #expect(throws: CourierError.self) {
      try await cutUpload(twice, size: 4000, cut: 1000)
    }
    #expect(error?.code == "upload_gone")
    state = twice.state.withLock { $0 }
    #expect(state.methods == ["POST", "HEAD", "POST", "HEAD"])
  }

  @Test("interop 8 refused, 3 and 5 listed: the creation again at 5, once, and resumed at 5")
  func interopVersionNegotiated() async throws {
    let server = FakeDraft()
    server.state.withLock { $0.accepted = [3, 5] }
    let result = try await cutUpload(server, size: 3000, cut: 1000)
    let state = server.state.withLock { $0 }
    #expect(state.methods == ["POST", "POST", "HEAD", "PATCH"])
    #expect(state.versions == ["8", "5", "5", "5"])
    #expect(state.stored == state.whole)
    #expect(result.interop == IETFInterop(5))
  }

  @Test("no version in common, or a pinned one refused: a refusal naming the versions, one POST")
  func interopVersionRefused() async throws {
    let server = FakeDraft()
    server.state.withLock { $0.accepted = [9, 10] }
    let error = await #expect(throws: CourierError.self) {
      try await cutUpload(server, size: 3000, cut: 3000)
    }
    #expect(error?.status == 400)
    #expect(error?.kind == .business)
    #expect(error?.code == "ietf_interop_unsupported")
    #expect(error?.serverMessage?.contains("interop versions 9, 10") == true)
    #expect(error?.serverMessage?.contains("Courier speaks 3 to 8") == true)
    #expect(server.state.withLock { $0.methods } == ["POST"])

    let pinned = FakeDraft()
    pinned.state.withLock { $0.accepted = [5] }
    let refused = await #expect(throws: CourierError.self) {
      try await cutUpload(pinned, size: 3000, cut: 3000, interop: IETFInterop(7))
    }
    #expect(refused?.code == "ietf_interop_unsupported")
    #expect(refused?.serverMessage?.contains("interop 7 is the one set by") == true)
    #expect(pinned.state.withLock { $0.versions } == ["7"])
  }

  @Test("interop 3: Upload-Incomplete on the creation and appends, octet-stream appends")
  func interopThreeFields() async throws {
    let server = FakeDraft()
    _ = try await cutUpload(server, size: 4000, cut: 1000, interop: IETFInterop(3))
    let state = server.state.withLock { $0 }
    #expect(state.stored == state.whole)
    #expect(state.versions == ["3", "3", "3"])
    let append = try #require(state.appendFields.last)
    #expect(append[.uploadIncomplete] == "?0")
    #expect(append[.uploadComplete] == nil)
    #expect(append[.contentType] == "application/octet-stream")
  }

  @Test("a 413 to an append: the limit it names for every later piece, the offset asked again")
  func appendLimitExceeded() async throws {
    let server = FakeDraft()
    server.state.withLock { $0.appendLimit = 2000 }
    _ = try await cutUpload(server, size: 9000, cut: 1000)
    let state = server.state.withLock { $0 }
    #expect(state.stored == state.whole)
    // The first append (the rest, below the 256 KiB first piece) refused, then pieces of 2000.
    #expect(state.appends.first ?? 0 > 2000)
    #expect(state.appends.dropFirst().allSatisfy { $0 <= 2000 })
    #expect(state.methods.prefix(4) == ["POST", "HEAD", "PATCH", "HEAD"])
  }

  @Test("appends are sized by the rate the server's answers confirm: a quarter second each")
  func piecesFollowTheConfirmedRate() async throws {
    let server = FakeDraft()
    let clock = ManualClock()
    // 8 MiB/s confirmed: after the 256 KiB first piece, 1 MiB (fourfold at most), then
    // pieces of 2 MiB (a quarter second).
    server.state.withLock {
      $0.clock = clock
      $0.rate = 8 << 20
    }
    _ = try await cutUpload(server, size: 6_000_000, cut: 1000, clock: clock)
    let state = server.state.withLock { $0 }
    #expect(state.stored == state.whole)
    #expect(state.appends.prefix(2) == [256 << 10, 1 << 20])
    #expect(state.appends.dropFirst(2).dropLast().allSatisfy { $0 == 2 << 20 }, "\(state.appends)")
    #expect(state.appends.count >= 4)
  }
}
