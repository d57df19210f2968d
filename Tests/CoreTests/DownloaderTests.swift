import CourierCore
import CourierDomain
import CourierPorts
import CourierSystem
import CourierTestKit
import CourierTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// `Downloader` and the response sink over the in-memory transport: what each reply does to
/// the partial file, the sidecar and the destination (decisions 2500, 2501).
@Suite("Downloader and ResponseSink (in memory)")
struct DownloaderTests {
  let url = URL(string: "https://api.example.com/photos/p1") ?? URL(fileURLWithPath: "/")
  let whole = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

  func folder() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-downloader-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
  }

  func digest(_ data: Data) -> String {
    "sha-256=:" + Data(SHA256.hash(data)).base64EncodedString() + ":"
  }

  func head(
    status: HTTPResponse.Status = .ok, etag: String = "\"v1\"", length: Int? = nil,
    digest: String? = nil, range: String? = nil
  ) -> HTTPResponse {
    var fields: HTTPFields = [.eTag: etag, .lastModified: "Wed, 02 Dec 2026 10:00:00 GMT"]
    fields[.contentLength] = String(length ?? whole.count)
    if let digest { fields[.reprDigest] = digest }
    if let range { fields[.contentRange] = range }
    return HTTPResponse(status: status, headerFields: fields)
  }

  func downloader(_ transport: InMemoryTransport, _ dir: URL) -> Downloader {
    Downloader(
      transport: transport, options: TransportOptions(),
      stateDirectory: dir.appendingPathComponent("state"), hasher: SwiftFileHasher())
  }

  @Test("a whole download: HEAD, GET into the partial file, digest checked, renamed into place")
  func whole() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    transport.enqueue(.response(head(digest: digest(whole))))
    transport.enqueue(.response(head(digest: digest(whole)), body: ResponseBody(bytes: whole)))
    let target = dir.appendingPathComponent("out/p1")
    let result = try await downloader(transport, dir).download(url, to: target)
    #expect(try Data(contentsOf: target) == whole)
    #expect(result.size == Int64(whole.count))
    #expect(result.sha256 == SHA256.hex(SHA256.hash(whole)))
    #expect(result.etag == "\"v1\"")
    #expect(transport.requests.map(\.method) == [.head, .get])
    #expect(transport.requests[1].headerFields[.range] == nil)
    let left = try FileManager.default.contentsOfDirectory(
      atPath: target.deletingLastPathComponent().path)
    #expect(left == ["p1"])
  }

  @Test("a partial file with its sidecar is continued with Range and If-Range (strong ETag)")
  func resumes() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let target = dir.appendingPathComponent("p1")
    // A first call dropped after 400 bytes: the in-memory transport fails the GET after
    // writing nothing, so write the 400 bytes as a killed process would have.
    let first = InMemoryTransport()
    first.enqueue(.response(head()))
    first.enqueue(failure: CourierError(.cancelled))
    await #expect(throws: CourierError.self) {
      _ = try await downloader(first, dir).download(url, to: target)
    }
    let partial = dir.appendingPathComponent(".p1.courier-partial")
    try whole.prefix(400).write(to: partial)
    let second = InMemoryTransport()
    second.enqueue(.response(head()))
    second.enqueue(
      .response(
        head(status: .partialContent, length: 600, range: "bytes 400-999/1000"),
        body: ResponseBody(bytes: whole.suffix(from: 400))))
    let result = try await downloader(second, dir).download(url, to: target)
    #expect(second.requests[1].headerFields[.range] == "bytes=400-")
    #expect(second.requests[1].headerFields[.ifRange] == "\"v1\"")
    #expect(result.resumedFrom == 400)
    #expect(try Data(contentsOf: target) == whole)
  }

  @Test("with a Repr-Digest the body is hashed as it arrives: the file is never read back")
  func hashedWhileReceived() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    transport.enqueue(.response(head(digest: digest(whole))))
    transport.enqueue(.response(head(digest: digest(whole)), body: ResponseBody(bytes: whole)))
    let hasher = CountingFileHasher()
    let result = try await Downloader(
      transport: transport, options: TransportOptions(),
      stateDirectory: dir.appendingPathComponent("state"), hasher: hasher
    ).download(url, to: dir.appendingPathComponent("p1"))
    #expect(result.sha256 == SHA256.hex(SHA256.hash(whole)))
    #expect(hasher.reads.isEmpty)
    #expect(hasher.streamed == Int64(whole.count))
  }

  @Test("a resumed download hashes its prefix once, the rest as it comes; a wrong tail is refused")
  func resumedPrefixHashedOnce() async throws {
    for tailIsRight in [true, false] {
      let dir = try folder()
      defer { try? FileManager.default.removeItem(at: dir) }
      let target = dir.appendingPathComponent("p1")
      let first = InMemoryTransport()
      first.enqueue(.response(head(digest: digest(whole))))
      first.enqueue(failure: CourierError(.cancelled))
      _ = try? await downloader(first, dir).download(url, to: target)
      try whole.prefix(400).write(to: dir.appendingPathComponent(".p1.courier-partial"))
      var tail = Data(whole.suffix(from: 400))
      if !tailIsRight { tail[tail.startIndex] ^= 0xFF }
      let second = InMemoryTransport()
      second.enqueue(.response(head(digest: digest(whole))))
      second.enqueue(
        .response(
          head(status: .partialContent, length: 600, range: "bytes 400-999/1000"),
          body: ResponseBody(bytes: tail)))
      let hasher = CountingFileHasher()
      let call = Downloader(
        transport: second, options: TransportOptions(),
        stateDirectory: dir.appendingPathComponent("state"), hasher: hasher)
      if tailIsRight {
        let result = try await call.download(url, to: target)
        #expect(result.resumedFrom == 400)
        #expect(result.sha256 == SHA256.hex(SHA256.hash(whole)))
      } else {
        await #expect {
          _ = try await call.download(url, to: target)
        } throws: { error in
          (error as? CourierError)?.code == "download_digest_mismatch"
        }
      }
      // The 400 bytes on disk once, the 600 as they came; nothing read back at the end.
      #expect(hasher.reads.isEmpty)
      #expect(hasher.streamed == Int64(whole.count))
    }
  }

  @Test("a digest that cannot follow the file (a body at another offset) is not trusted")
  func receivedDigestOffsets() throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("f")
    try whole.write(to: file)
    let followed = ReceivedDigest(hasher: SwiftFileHasher())
    try followed.cover(file, length: 400)
    followed.begin(at: 500)
    whole.suffix(from: 500).withUnsafeBytes { followed.append($0) }
    #expect(followed.digest(ofLength: 1000) == nil)
    // A body from byte 0 starts it afresh.
    followed.begin(at: 0)
    whole.withUnsafeBytes { followed.append($0) }
    #expect(followed.digest(ofLength: 999) == nil)
    let again = ReceivedDigest(hasher: SwiftFileHasher())
    again.begin(at: 0)
    whole.prefix(300).withUnsafeBytes { again.append($0) }
    again.begin(at: 300)
    whole.suffix(from: 300).withUnsafeBytes { again.append($0) }
    #expect(again.digest(ofLength: 1000) == SHA256.hash(whole))
  }

  @Test("a 200 to a ranged request (validator changed) rewrites the file from byte 0")
  func restartsOn200() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let target = dir.appendingPathComponent("p1")
    let first = InMemoryTransport()
    first.enqueue(.response(head()))
    first.enqueue(failure: CourierError(.cancelled))
    _ = try? await downloader(first, dir).download(url, to: target)
    // Longer stale bytes than the new file: none may survive past its end.
    try Data(repeating: 0xEE, count: 900).write(
      to: dir.appendingPathComponent(".p1.courier-partial"))
    let newer = Data(whole.prefix(700))
    let second = InMemoryTransport()
    second.enqueue(.response(head()))  // the HEAD still says v1; the GET's 200 says v2
    second.enqueue(
      .response(head(etag: "\"v2\"", length: 700), body: ResponseBody(bytes: newer)))
    let result = try await downloader(second, dir).download(url, to: target)
    #expect(second.requests[1].headerFields[.range] == "bytes=900-")
    #expect(result.resumedFrom == 0)
    #expect(result.etag == "\"v2\"")
    #expect(try Data(contentsOf: target) == newer)
  }

  @Test("a weak ETag without Last-Modified cannot resume: the partial file is not continued")
  func weakETag() {
    let record = DownloadRecord(url: "u", partial: "p", etag: "W/\"v1\"")
    #expect(DownloadResume.ifRange(for: record) == nil)
    let dated = DownloadRecord(url: "u", partial: "p", etag: "W/\"v1\"", lastModified: "d")
    #expect(DownloadResume.ifRange(for: dated) == "d")
    #expect(
      DownloadResume.ifRange(for: DownloadRecord(url: "u", partial: "p", etag: "\"s\"")) == "\"s\"")
  }

  @Test("a digest mismatch deletes the partial file and renames nothing")
  func digestMismatch() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let transport = InMemoryTransport()
    let wrong = digest(Data("something else".utf8))
    transport.enqueue(.response(head(digest: wrong)))
    transport.enqueue(.response(head(digest: wrong), body: ResponseBody(bytes: whole)))
    let target = dir.appendingPathComponent("p1")
    await #expect {
      _ = try await downloader(transport, dir).download(url, to: target)
    } throws: { error in
      (error as? CourierError)?.code == "download_digest_mismatch"
    }
    #expect(!FileManager.default.fileExists(atPath: target.path))
    #expect(
      !FileManager.default.fileExists(
        atPath: dir.appendingPathComponent(".p1.courier-partial").path))
  }

  @Test("a 206 whose Content-Range does not start at the sink's offset writes nothing")
  func wrongContentRange() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("sink")
    try Data(repeating: 1, count: 10).write(to: file)
    let transport = InMemoryTransport()
    transport.enqueue(
      .response(
        head(status: .partialContent, length: 5, range: "bytes 11-15/16"),
        body: ResponseBody(bytes: Data(repeating: 2, count: 5))))
    var options = TransportOptions()
    options.responseSink = ResponseSink(file: file, offset: 10)
    await #expect {
      _ = try await transport.send(HTTPRequest(method: .get, url: url), body: nil, options: options)
    } throws: { error in
      (error as? CourierError)?.code == "reply_content_range_mismatch"
    }
    #expect(try Data(contentsOf: file) == Data(repeating: 1, count: 10))
  }

  @Test("an error reply's body stays in memory with a sink; a 2xx's goes to the file")
  func errorsStayInMemory() async throws {
    let dir = try folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("sink")
    let transport = InMemoryTransport()
    transport.enqueue(status: 404, json: #"{"code":"not_found","message":"No such photo."}"#)
    transport.enqueue(.response(head(), body: ResponseBody(bytes: whole)))
    var options = TransportOptions()
    options.responseSink = ResponseSink(file: file)
    let request = HTTPRequest(method: .get, url: url)
    let (_, missing) = try await transport.send(request, body: nil, options: options)
    #expect(missing.file == nil && missing.bytes.count > 0)
    let (_, found) = try await transport.send(request, body: nil, options: options)
    #expect(found.file == file && found.count == Int64(whole.count) && found.bytes.isEmpty)
    #expect(try Data(contentsOf: file) == whole)
  }

  @Test("the retry step does not repeat a streamed GET that reached the server")
  func retryDoesNotRepeatAStreamedGet() async throws {
    let transport = InMemoryTransport()
    transport.enqueue(
      failure: CourierError(.connectionLost, mayHaveReachedServer: true, context: "GET"))
    transport.enqueue(.response(head(), body: ResponseBody(bytes: whole)))
    let stack = RetryingTransport(
      transport,
      executor: RetryExecutor(
        policy: RetryPolicy(), clock: ManualClock(), random: FixedRandomSource(0.5)))
    var options = TransportOptions()
    options.responseSink = ResponseSink(file: URL(fileURLWithPath: "/nonexistent/never"))
    await #expect(throws: CourierError.self) {
      _ = try await stack.send(HTTPRequest(method: .get, url: url), body: nil, options: options)
    }
    #expect(transport.requests.count == 1)
  }
}
