import CourierCore
import CourierDomain
import CourierLinux
import CourierTUI
import CourierTestKit
import Foundation
import HTTPTypes
import Testing

/// The interface's upload line (the core has an `UploadState` of its own).
typealias ShownUpload = CourierTUI.UploadState

/// The bridge over fakes: a manual path monitor and clock, an in-memory store and transport.
/// The end-to-end test (`TUIEndToEndTests`) does the same with every real part.
@Suite("CoreBridge", .timeLimit(.minutes(1)))
struct CoreBridgeTests {
  struct Fixture {
    let monitor = ManualPathMonitor()
    let clock = ManualClock()
    let transport = InMemoryTransport()
    let hub = UpdateHub()
    let store = InMemoryLocalStore()
    let bridge: CoreBridge

    init() throws {
      var config = CourierConfig(environment: ["HOME": "/nonexistent"])
      config.token = "token"
      config.retry.maxAttempts = 1
      let environment = try CourierEnvironment(
        config: config,
        overrides: AdapterOverrides(
          transport: transport, pathMonitor: monitor, localStore: store))
      bridge = try CoreBridge(environment: environment, hub: hub, clock: clock)
    }
  }

  /// Reads updates until one satisfies `predicate`; returns it.
  static func next(
    _ iterator: inout AsyncStream<TUIUpdate>.Iterator, where predicate: (TUIUpdate) -> Bool
  ) async -> TUIUpdate? {
    while let update = await iterator.next() {
      if predicate(update) { return update }
    }
    return nil
  }

  /// Runs the bridge over an empty server list and takes the path offline.
  /// - Returns: the running bridge, for the caller to cancel.
  static func startOffline(
    _ fixture: Fixture, _ updates: inout AsyncStream<TUIUpdate>.Iterator
  ) async -> Task<Void, any Error> {
    fixture.transport.enqueue(status: 200, json: "[]")
    let running = Task { try await fixture.bridge.run() }
    #expect(await sendWhenRunning(fixture.monitor, .unsatisfied))
    let offline = await next(&updates) { $0 == .path(.unsatisfied) }
    #expect(offline != nil)
    return running
  }

  @Test("a queued upload counts as pending and gets its line, named, at the confirmed bytes")
  func queuedUpload() async throws {
    let fixture = try Fixture()
    let upload = QueuedUpload(
      transfer: .tus, tusEndpoint: "http://courier.test/uploads", formTarget: nil,
      title: "Train", filename: "train.mp4", contentType: "video/mp4", length: 1000,
      boundary: "b", source: "/train.mp4",
      verdict: .init(send: .original, reason: .notAnImage, message: ""))
    try fixture.store.enqueue(upload.operation(uploadID: "u1", enqueuedAt: Date()))
    let bridge = try CoreBridge(
      environment: try CourierEnvironment(
        config: {
          var config = CourierConfig(environment: ["HOME": "/nonexistent"])
          config.token = "token"
          return config
        }(),
        overrides: AdapterOverrides(
          transport: fixture.transport, pathMonitor: fixture.monitor,
          localStore: fixture.store)),
      hub: fixture.hub, clock: fixture.clock)
    let state = await bridge.initialState()
    #expect(state.pendingCount == 1)
    #expect(state.queuedUploads == [QueuedUploadItem(name: "train.mp4", percent: 0)])
  }

  @Test("a path change reaches the header with no key, after the interface's short delay")
  func pathChanges() async throws {
    let fixture = try Fixture()
    fixture.transport.enqueue(status: 200, json: "[]")
    var updates = fixture.hub.stream.makeAsyncIterator()
    let running = Task { try await fixture.bridge.run() }
    defer { running.cancel() }
    #expect(await sendWhenRunning(fixture.monitor, .satisfied))
    let seen1 = await Self.next(&updates) { $0 == .path(.satisfied) }
    #expect(seen1 != nil)
    fixture.monitor.send(.unsatisfied)
    await fixture.clock.waitForSleepers(1)
    fixture.clock.advance(by: CoreBridge.pathDelays.offline)
    let seen2 = await Self.next(&updates) { $0 == .path(.unsatisfied) }
    #expect(seen2 != nil)
    #expect(CoreBridge.pathDelays.offline < .seconds(1))
  }

  @Test("behind a Wi-Fi login page, the header learns the changes are not going out")
  func loginPage() async throws {
    let fixture = try Fixture()
    let page = HTTPResponse(status: 200, headerFields: [.contentType: "text/html"])
    let html = ResponseBody(
      bytes: Data("<html><body>Please log in to the network</body></html>".utf8))
    for _ in 0..<10 { fixture.transport.enqueue(.response(page, body: html)) }
    var updates = fixture.hub.stream.makeAsyncIterator()
    let running = Task { try await fixture.bridge.run() }
    defer { running.cancel() }
    // Every update is folded into the interface's state, as the event loop does: the first
    // refresh's page can say "not your server" before the path is up, and the write's page
    // then says the same, which the bridge does not send twice.
    var state = TUIState(path: .unknown, pendingCount: 0)
    let size = TerminalSize(rows: 24, columns: 80)
    func fold(until settled: (TUIState) -> Bool) async -> Bool {
      while let update = await updates.next() {
        Reducer.apply(update, to: &state, size: size)
        if settled(state) { return true }
      }
      return false
    }
    #expect(await sendWhenRunning(fixture.monitor, .satisfied))
    #expect(await fold { $0.path == .satisfied })
    try await fixture.bridge.addArticle(title: "Lunch", body: "at noon")
    let told = await fold { state in
      state.pendingCount == 1 && !state.isSyncing
        && state.sendBlocked?.contains("not your server") == true
        && fixture.transport.requests.contains { $0.summary.hasPrefix("PUT /articles/") }
    }
    #expect(told, "the header never said the write was not going out: \(state)")
    #expect(Renderer.badge(for: state) == "Not sent · 1 pending")
  }

  @Test("an article added offline shows at once, flagged pending, and the outbox counts it")
  func addOffline() async throws {
    let fixture = try Fixture()
    var updates = fixture.hub.stream.makeAsyncIterator()
    let running = await Self.startOffline(fixture, &updates)
    defer { running.cancel() }
    try await fixture.bridge.addArticle(title: "Lunch", body: "at noon")
    let shown = await Self.next(&updates) {
      if case .articles(let items, _) = $0 { return items.contains { $0.title == "Lunch" } }
      return false
    }
    guard case .articles(let items, _) = shown else {
      Issue.record("no articles update with the new article")
      return
    }
    #expect(items.first { $0.title == "Lunch" }?.isPending == true)
    let seen4 = await Self.next(&updates) { $0 == .outbox(pending: 1, isSyncing: false) }
    #expect(seen4 != nil)
  }

  @Test("edits and deletes go through the sync engine and show at once")
  func editAndDelete() async throws {
    let fixture = try Fixture()
    var updates = fixture.hub.stream.makeAsyncIterator()
    let running = await Self.startOffline(fixture, &updates)
    defer { running.cancel() }
    try await fixture.bridge.addArticle(title: "Lunch", body: "at noon")
    let added = await Self.next(&updates) { Self.titles($0)?.contains("Lunch") == true }
    let id = try #require(Self.items(added)?.first { $0.title == "Lunch" }?.id)
    try await fixture.bridge.editArticle(id: id, title: "Dinner", body: "at eight")
    let edited = await Self.next(&updates) { Self.titles($0) == ["Dinner"] }
    #expect(Self.items(edited)?.first?.body == "at eight")
    #expect(Self.items(edited)?.first?.isPending == true)
    try await fixture.bridge.deleteArticle(id: id)
    let deleted = await Self.next(&updates) { Self.titles($0) == [] }
    #expect(deleted != nil)
    await #expect(throws: (any Error).self) { try await fixture.bridge.deleteArticle(id: id) }
  }

  static func items(_ update: TUIUpdate?) -> [ArticleItem]? {
    guard case .articles(let items, _) = update else { return nil }
    return items
  }

  static func titles(_ update: TUIUpdate?) -> [String]? { items(update)?.map(\.title) }

  @Test(
    "refusals and conflicts are titled by the operation, with their messages",
    arguments: [
      (OutboxKind.create, true, "Create “Lunch”"), (.update, true, "Edit “Lunch”"),
      (.delete, false, "Delete an article"),
    ])
  func issues(kind: OutboxKind, hasTitle: Bool, title: String) {
    let operation = OutboxOperation(
      key: RecordKey(collection: "articles", id: "a"), kind: kind,
      payload: hasTitle ? .object(["title": .string("Lunch")]) : nil, baseVersion: nil,
      enqueuedAt: Date())
    let server: JSONValue = .object(["id": .string("a"), "version": .integer(2)])
    var state = SyncState(
      rejected: [
        OutboxEntry(sequence: 1, operation: operation, state: .rejected(message: "No.", code: nil))
      ],
      conflicted: [
        OutboxEntry(sequence: 2, operation: operation, state: .conflicted(serverRecord: server))
      ])
    // A parked write (decision 2401) is listed with the refused ones, with its reason.
    state.parked = [
      OutboxEntry(
        sequence: 3, operation: operation, state: .parked(reason: "Never proved.", code: nil))
    ]
    let (rejected, conflicts) = CoreBridge.issues(state)
    #expect(
      rejected == [
        SyncIssue(articleID: "a", title: title, message: "No."),
        SyncIssue(articleID: "a", title: title, message: "Never proved."),
      ])
    #expect(conflicts.map(\.title) == [title])
    #expect(conflicts.first?.message.contains("changed elsewhere") == true)
    // A conflict that shows no server record: deleted there, unless it was a create.
    state.conflicted = [
      OutboxEntry(sequence: 2, operation: operation, state: .conflicted(serverRecord: .null))
    ]
    let gone = CoreBridge.issues(state).conflicts.first?.message ?? ""
    #expect(gone.contains(kind == .create ? "changed elsewhere" : "deleted elsewhere"), "\(gone)")
  }

  @Test("the uploader's states become the upload line; a cancelled upload shows nothing")
  func uploadStates() {
    let start = ShownUpload(fileName: "a.jpg", phase: .compressing)
    let offline = CourierError(.offline)
    let table: [(CourierCore.UploadState, ShownUpload?)] = [
      (.compressing, start),
      (
        .uploading(sent: 5, total: 10),
        ShownUpload(fileName: "a.jpg", sent: 5, total: 10, phase: .uploading)
      ),
      (
        .retrying(attempt: 1, maxAttempts: 3, delay: .seconds(2), reason: offline),
        ShownUpload(fileName: "a.jpg", phase: .retrying(attempt: 1, delay: .seconds(2)))
      ),
      (.failed(CourierError(.cancelled)), nil),
      (
        .failed(offline),
        ShownUpload(
          fileName: "a.jpg", phase: .failed(message: UserMessages.message(for: offline)))
      ),
    ]
    for (state, expected) in table {
      #expect(CoreBridge.uploadState(state, after: start) == expected)
    }
  }
}

/// Sends a path once the bridge's monitor has a subscriber (it starts in the bridge's task),
/// polling every 5 ms for up to 30 s instead of spinning on `Task.yield()`, which holds one of
/// the concurrency pool's two threads on a 2-core machine.
/// - Returns: whether a subscriber got it.
func sendWhenRunning(_ monitor: ManualPathMonitor, _ status: PathStatus) async -> Bool {
  let end = ContinuousClock.now + .seconds(30)
  while ContinuousClock.now < end {
    if monitor.send(status) { return true }
    try? await Task.sleep(for: .milliseconds(5))
  }
  return false
}

extension CoreBridgeTests {
  /// The upload path a person types: `~` expanded as NSString did, without Foundation
  /// (decision 1414).
  // Serialized: Foundation's side reads the password database through `getpwnam`, whose
  // buffer is shared by every thread.
  @Test(
    "a leading ~ or ~user expands as NSString.expandingTildeInPath does", .serialized,
    arguments: [
      "~", "~/a.jpg", "~root/x", "~root", "/abs/~/x", "rel/x", "", "~nosuchuser-courier/x",
    ])
  func tildeExpansion(_ path: String) {
    // A bare `~` is `HOME`, as a shell expands it: Foundation on Linux reads the password
    // database instead, so under another `HOME` the two differ and the shell is the reference.
    let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
    if let home, path == "~" || path.hasPrefix("~/") {
      #expect(CoreBridge.expandingTilde(path) == home + path.dropFirst())
    } else {
      #expect(CoreBridge.expandingTilde(path) == (path as NSString).expandingTildeInPath)
    }
  }

  @Test("~user expands the same from many threads at once (its own buffer, not getpwnam's)")
  func tildeExpansionConcurrently() async {
    let expected = NSString(string: "~root/x").expandingTildeInPath
    let wrong = await withTaskGroup(of: [String].self) { group in
      for _ in 0..<8 {
        group.addTask {
          var wrong: [String] = []
          for _ in 0..<500 {
            let root = CoreBridge.expandingTilde("~root/x")
            if root != expected { wrong.append(root) }
            let nobody = CoreBridge.expandingTilde("~nosuchuser-courier")
            if nobody != "~nosuchuser-courier" { wrong.append(nobody) }
          }
          return wrong
        }
      }
      return await group.reduce(into: []) { $0 += $1 }
    }
    #expect(wrong.isEmpty, "\(wrong.count) wrong expansions, e.g. \(wrong.prefix(3))")
  }
}
