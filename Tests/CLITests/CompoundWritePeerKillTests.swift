import CourierCLI
import CourierCLITestSupport
import CourierDomain
import CourierSystem
import CourierTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The kill matrix of `CompoundWriteKillTests` against the second implementation (decision
/// 2515): the compound write's file goes to tuspyserver (`Backend/tus-peer.sh`, named by
/// `COURIER_ATTACHMENT_UPLOAD_URL`), its record to the reference backend, which trusts the
/// peer's uploads (`attachment_servers`) and checks the named upload is finished. `courier
/// articles add --attach` is killed with SIGKILL while the server of that step holds its request
/// (`/__hold` on the peer or on the backend; the kill comes once the hold counts it waiting),
/// then `courier sync`: the peer stores one finished upload with the kept bytes (SHA-256), the
/// backend one article naming its URL and no photo of its own, the local store the same URL.
@Suite("a compound write killed at each step, its file on tuspyserver", .serialized, .sharedBackend)
struct CompoundWritePeerKillTests {
  let cli = CLIFixture("courier-compound-peer-kill")

  /// Where the kill comes, as the request held then and by whom.
  enum Step: String, CaseIterable, CustomTestStringConvertible {
    /// The record and its entry are committed; the peer holds the tus `OPTIONS`.
    case afterCommit
    /// The peer made the upload (an empty creation); its answer, the upload's URL, waits: the
    /// replay makes another, and the empty one is left for the peer to expire.
    case duringCreation
    /// The peer stored the file's bytes (the `PATCH` after an empty creation); its answer waits.
    case duringFile
    /// The file is stored and proven; the backend holds the record's PUT before applying it.
    case afterFile
    /// The backend applied the record's PUT; its answer waits.
    case duringRecord

    /// Whether the peer holds the request (else the backend).
    var onPeer: Bool { self == .afterCommit || self == .duringCreation || self == .duringFile }

    var hold: String {
      switch self {
      case .afterCommit: #"{"after":0,"when":"before","method":"OPTIONS"}"#
      case .duringCreation: #"{"after":0,"when":"response","method":"POST"}"#
      case .duringFile: #"{"after":0,"when":"response","method":"PATCH"}"#
      case .afterFile: #"{"after":0,"when":"before","method":"PUT"}"#
      case .duringRecord: #"{"after":0,"when":"response","method":"PUT"}"#
      }
    }

    var testDescription: String { rawValue }
  }

  @Test(
    "killed at a step, then sync: one upload on the peer, one article naming it, the URL here",
    arguments: Step.allCases, 1...3)
  func killedThenSynced(_ step: Step, _ round: Int) async throws {
    let peer = try await TusPeerInteropTests.Peer()
    defer { peer.stop() }
    let backend = try await SharedBackend.fresh()
    let endpoint = peer.url.absoluteString + "/files/"
    try await backend.call("POST", "/__config", json: #"{"attachment_servers":["\#(endpoint)"]}"#)
    let environment = ["COURIER_ATTACHMENT_UPLOAD_URL": endpoint]
    let dir = try await cli.client(backend)
    defer { try? FileManager.default.removeItem(at: dir) }
    let photo = dir.appendingPathComponent("sunset.jpg")
    try await Tool.run(
      "/usr/bin/convert", ["-size", "320x240", "plasma:fractal", "-quality", "90", photo.path])
    let kept = try await keptBytes(of: photo)

    if step.onPeer {
      try await Self.peerCall(peer, "POST", "/__hold", json: step.hold)
    } else {
      try await backend.call("POST", "/__hold", json: step.hold)
    }
    let process = try cli.process(
      backend.url.absoluteString,
      ["articles", "add", "--title", "Sunset \(round)", "--attach", "photo=\(photo.path)"],
      dataDir: dir, environment: environment)
    try process.run()
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    let deadline = ContinuousClock.now + .seconds(120)
    while try await
      (step.onPeer
      ? Self.peerHeld(peer) : CLIFixture.heldRequests(backend)) < 1
    {
      try #require(process.isRunning, "courier ended before \(step)")
      try #require(ContinuousClock.now < deadline, "no server held \(step)'s request")
      try await Task.sleep(for: .milliseconds(10))
    }
    kill(process.processIdentifier, SIGKILL)
    #expect(await process.exited(within: .seconds(120)))
    if step.onPeer {
      try await Self.peerCall(peer, "POST", "/__hold", json: #"{"release":true}"#)
    } else {
      try await backend.call("POST", "/__hold", json: #"{"release":true}"#)
    }

    let sync = await cli.run(backend, ["sync"], dataDir: dir, environment: environment)
    #expect(sync.code == 0, "\(sync.output.stderr)")
    let uploads = try await Self.uploads(peer)
    let finished = uploads.filter { $0.offset == $0.length }.map(\.id)
    #expect(finished.count == 1, "\(uploads)")
    // Only a creation killed before its answer leaves another, empty (decision 2515).
    #expect(uploads.allSatisfy { $0.offset == $0.length || $0.offset == 0 }, "\(uploads)")
    #expect(uploads.count == (step == .duringCreation ? 2 : 1), "\(uploads)")
    let upload = try #require(finished.first)
    #expect(SHA256.hex(SHA256.hash(try await peer.stored(upload))) == kept)
    let articles = try await CLIFixture.articles(backend)
    #expect(articles.count == 1, "\(articles)")
    let named = try #require(articles.first?["photo"] as? String)
    #expect(named == endpoint + upload, "\(articles)")
    #expect(try await CLIFixture.photos(backend).isEmpty, "a photo went to the backend")
    let local = await cli.run(
      backend, ["records", "articles", "list", "--offline", "--json"], dataDir: dir)
    let listing = try #require(
      try JSONSerialization.jsonObject(with: Data(local.output.stdout.utf8)) as? [String: Any])
    let records = try #require(listing["records"] as? [[String: Any]])
    #expect(records.count == 1)
    let fields = try #require(records.first?["fields"] as? [String: Any])
    #expect(fields["photo"] as? String == named, "\(records)")
    #expect(await CLIFixture.settledQueuedUploads(in: dir).isEmpty)
  }

  /// The SHA-256 of the bytes a compound write keeps for `photo` (compressed as every upload
  /// is): an offline `articles add` in a scratch folder, its kept copy read.
  private func keptBytes(of photo: URL) async throws -> String {
    let scratch = try cli.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: scratch) }
    let add = await cli.run(
      CLIFixture.deadURL,
      ["articles", "add", "--title", "Scratch", "--attach", "photo=\(photo.path)"],
      dataDir: scratch)
    let body = try #require(
      CLIFixture.queuedUploads(in: scratch).first { $0.hasSuffix(".body") },
      "\(add.output.stderr)")
    return try CLIFixture.sha256(
      scratch.appendingPathComponent("queued-uploads").appendingPathComponent(body))
  }

  /// The peer's uploads and where each stands (a tus `HEAD` of each).
  static func uploads(_ peer: TusPeerInteropTests.Peer) async throws -> [(
    id: String, offset: Int, length: Int
  )] {
    let names = try FileManager.default.contentsOfDirectory(atPath: peer.directory.path)
    var uploads: [(id: String, offset: Int, length: Int)] = []
    for name in names.sorted() where name.hasSuffix(".info") {
      let id = String(name.dropLast(".info".count))
      var request = URLRequest(url: peer.url.appendingPathComponent("files/\(id)"))
      request.httpMethod = "HEAD"
      request.setValue("1.0.0", forHTTPHeaderField: "Tus-Resumable")
      let (_, response) = try await URLSession.shared.data(for: request)
      let fields = try #require(response as? HTTPURLResponse)
      try #require(fields.statusCode == 200, "HEAD \(id): \(fields.statusCode)")
      let offset = try #require(fields.value(forHTTPHeaderField: "Upload-Offset").flatMap(Int.init))
      let length = try #require(fields.value(forHTTPHeaderField: "Upload-Length").flatMap(Int.init))
      uploads.append((id, offset, length))
    }
    return uploads
  }

  /// How many requests the peer holds now.
  static func peerHeld(_ peer: TusPeerInteropTests.Peer) async throws -> Int {
    let body = try await peerCall(peer, "GET", "/__hold")
    return (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["held"] as? Int ?? 0
  }

  /// Calls one of the peer's hooks.
  @discardableResult
  static func peerCall(
    _ peer: TusPeerInteropTests.Peer, _ method: String, _ path: String, json: String? = nil
  ) async throws -> Data {
    var request = URLRequest(url: peer.url.appendingPathComponent(String(path.dropFirst())))
    request.httpMethod = method
    if let json {
      request.httpBody = Data(json.utf8)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (body, response) = try await URLSession.shared.data(for: request)
    try #require((response as? HTTPURLResponse)?.statusCode == 200, "\(method) \(path)")
    return body
  }
}
