import CourierDomain
import CourierPorts
import CourierSQLite
import CourierTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The response cache's store: budget, eviction order, pins and protected files, admission of
/// a file made elsewhere, orphans, a damaged index, and kill -9 during admissions.
@Suite("Response cache store")
struct ResponseCacheStoreTests {
  static let start = Date(timeIntervalSince1970: 1_800_000_000)

  static func body(_ seed: Int, size: Int) -> Data {
    Data((0..<size).map { UInt8(truncatingIfNeeded: seed &+ $0) })
  }

  static func fields(_ lines: [(HTTPField.Name, String)] = []) -> HTTPFields {
    var fields = HTTPFields()
    for (name, value) in lines { fields.append(HTTPField(name: name, value: value)) }
    return fields
  }

  @discardableResult
  static func put(
    _ cache: SQLiteResponseCache, _ url: String, size: Int, at second: Double,
    partition: String = "p"
  ) throws -> CachedResponse {
    try cache.store(
      partition: partition, url: url, varyValues: [:], status: 200,
      fields: fields([(.eTag, "\"\(url)\"")]), body: body(url.count, size: size),
      now: start.addingTimeInterval(second))
  }

  /// Body files on disk that are not temporary files.
  static func bodyFiles(_ directory: String) -> Set<String> {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/bodies")) ?? []
    return Set(names.filter { !$0.hasPrefix(".") })
  }

  @Test("a stored reply reads back whole, with its fields, Vary values and validators")
  func roundTrip() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let cache = try SQLiteResponseCache(directory: directory.path + "/cache", budget: 1 << 20)
    let fields = Self.fields([
      (.eTag, "\"v1\""), (.lastModified, "Sun, 06 Nov 1994 08:49:37 GMT"),
      (.cacheControl, "max-age=5"), (.contentType, "application/json"),
    ])
    try cache.store(
      partition: "p", url: "http://h/a", varyValues: ["accept": "a/b"], status: 203,
      fields: fields, body: Data("[1]".utf8), now: Self.start)
    // Reopened: durable.
    let reopened = try SQLiteResponseCache(directory: directory.path + "/cache", budget: 1 << 20)
    let entry = try #require(try reopened.entries(partition: "p", url: "http://h/a").first)
    #expect(entry.status == 203)
    #expect(entry.fields == fields)
    #expect(entry.varyValues == ["accept": "a/b"])
    #expect(entry.etag == "\"v1\"")
    #expect(entry.lastModified == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(entry.storedAt == Self.start)
    #expect(try reopened.body(of: entry) == Data("[1]".utf8))
    #expect(try reopened.entries(partition: "other", url: "http://h/a").isEmpty)
    let mode =
      try FileManager.default.attributesOfItem(atPath: directory.path + "/cache")[
        .posixPermissions] as? NSNumber
    #expect(mode?.intValue == 0o700)
  }

  @Test("the least recently used goes first; a use counts; the same key replaces, not adds")
  func lruOrder() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let cache = try SQLiteResponseCache(directory: directory.path, budget: 300)
    let a = try Self.put(cache, "http://h/a", size: 100, at: 0)
    try Self.put(cache, "http://h/b", size: 100, at: 1)
    try Self.put(cache, "http://h/c", size: 100, at: 2)
    try cache.touch(a, now: Self.start.addingTimeInterval(3))
    try Self.put(cache, "http://h/d", size: 100, at: 4)  // evicts b, the least recent
    #expect(try cache.allEntries().map(\.url) == ["http://h/c", "http://h/a", "http://h/d"])
    try Self.put(cache, "http://h/d", size: 150, at: 5)  // replaces d, evicts c
    #expect(try cache.allEntries().map(\.url) == ["http://h/a", "http://h/d"])
    #expect(try cache.totalBytes() == 250)
    #expect(Self.bodyFiles(directory.path).count == 2)
  }

  @Test(
    "a reply larger than the budget, or one that only fits by evicting pinned entries, is refused")
  func refusals() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let cache = try SQLiteResponseCache(
      directory: directory.path, budget: 300, protected: { ["http://h/pending"] })
    #expect {
      try Self.put(cache, "http://h/huge", size: 301, at: 0)
    } throws: { ($0 as? StoreError)?.message.contains("exceed the whole budget") == true }
    try Self.put(cache, "http://h/pinned", size: 150, at: 1)
    try cache.setPinned(true, partition: "p", url: "http://h/pinned")
    try Self.put(cache, "http://h/pending", size: 100, at: 2)
    #expect {
      try Self.put(cache, "http://h/new", size: 100, at: 3)
    } throws: { ($0 as? StoreError)?.message.contains("held by pinned entries") == true }
    #expect(Set(try cache.allEntries().map(\.url)) == ["http://h/pinned", "http://h/pending"])
    #expect(Self.bodyFiles(directory.path).count == 2)
    // No temporary file left behind by the refusals.
    let all = try FileManager.default.contentsOfDirectory(atPath: directory.path + "/bodies")
    #expect(all.count == 2)
    // Unpinned, it is evicted like any other.
    try cache.setPinned(false, partition: "p", url: "http://h/pinned")
    try Self.put(cache, "http://h/new", size: 100, at: 4)
    #expect(Set(try cache.allEntries().map(\.url)) == ["http://h/pending", "http://h/new"])
  }

  @Test("1,000 random admissions: the budget is never exceeded, pinned and protected entries stay")
  func randomAdmissions() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var generator = SplitMix64(testSeed: 0xCA_C4E5)
    let protectedURLs = Mutex<Set<String>>([])
    let budget = 64 * 1024
    let cache = try SQLiteResponseCache(
      directory: directory.path, budget: budget, protected: { protectedURLs.withLock { $0 } })
    var pinned: Set<String> = []
    var refused = 0
    for index in 0..<1_000 {
      let url = "http://h/\(Int.random(in: 0..<300, using: &generator))"
      let size = Int.random(in: 0...8_192, using: &generator)
      let roll = Int.random(in: 0..<100, using: &generator)
      do {
        try Self.put(cache, url, size: size, at: Double(index))
        if roll < 3, pinned.count < 3 {
          try cache.setPinned(true, partition: "p", url: url)
          pinned.insert(url)
        } else if roll < 6, protectedURLs.withLock({ $0.count }) < 3 {
          protectedURLs.withLock { _ = $0.insert(url) }
        } else if roll < 9, let some = pinned.first {
          try cache.setPinned(false, partition: "p", url: some)
          pinned.remove(some)
        } else if roll < 12 {
          protectedURLs.withLock { if let some = $0.first { $0.remove(some) } }
        }
      } catch let error as StoreError where error.code == .invalidInput {
        refused += 1
      }
      let entries = try cache.allEntries()
      let total = entries.reduce(0) { $0 + $1.size }
      let context = "admission \(index) (\(generator.seedDescription))"
      #expect(total <= budget, "\(context): \(total) bytes")
      #expect(try cache.totalBytes() == total, "\(context)")
      let urls = Set(entries.map(\.url))
      #expect(pinned.isSubset(of: urls), "\(context): a pinned entry was evicted")
      let kept = protectedURLs.withLock { $0 }
      #expect(kept.isSubset(of: urls), "\(context): a protected entry was evicted")
      if total > budget || !pinned.isSubset(of: urls) || !kept.isSubset(of: urls) { break }
    }
    // The files on disk are exactly the entries'.
    #expect(Self.bodyFiles(directory.path).count == (try cache.allEntries().count))
    #expect(refused < 50, "refused \(refused) of 1,000")
  }

  @Test("a finished file is moved in with its URL and validators, and can be pinned")
  func admitFile() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let cache = try SQLiteResponseCache(directory: directory.path + "/cache", budget: 1_000)
    let download = directory.path + "/photo.part"
    try Self.body(7, size: 600).write(to: URL(fileURLWithPath: download))
    let entry = try cache.admit(
      fileAt: download, partition: "p", url: "http://h/photos/1",
      fields: Self.fields([(.eTag, "\"abc\""), (.lastModified, "Sun, 06 Nov 1994 08:49:37 GMT")]),
      pinned: true, now: Self.start)
    #expect(!FileManager.default.fileExists(atPath: download))
    #expect(entry.pinned && entry.size == 600 && entry.etag == "\"abc\"")
    #expect(try cache.body(of: entry) == Self.body(7, size: 600))
    // Pinned: a later admission that would need its room is refused, and it stays.
    #expect(throws: StoreError.self) { try Self.put(cache, "http://h/x", size: 500, at: 1) }
    #expect(try cache.allEntries().map(\.url) == ["http://h/photos/1"])
    // A refused admission leaves the file where it was.
    let second = directory.path + "/second.part"
    try Self.body(8, size: 500).write(to: URL(fileURLWithPath: second))
    #expect(throws: StoreError.self) {
      try cache.admit(
        fileAt: second, partition: "p", url: "http://h/photos/2", fields: [:], now: Self.start)
    }
    #expect(FileManager.default.fileExists(atPath: second))
  }

  @Test("orphans are swept at open: body files no entry names, old temporary files")
  func orphans() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    do {
      let cache = try SQLiteResponseCache(directory: directory.path, budget: 1_000)
      try Self.put(cache, "http://h/a", size: 10, at: 0)
    }
    let bodies = directory.path + "/bodies/"
    try Data("x".utf8).write(to: URL(fileURLWithPath: bodies + "0123456789abcdef0123456789abcdef"))
    try Data("x".utf8).write(to: URL(fileURLWithPath: bodies + ".old.tmp"))
    try Data("x".utf8).write(to: URL(fileURLWithPath: bodies + ".young.tmp"))
    var times = [
      timespec(tv_sec: time(nil) - 3_600, tv_nsec: 0),
      timespec(tv_sec: time(nil) - 3_600, tv_nsec: 0),
    ]
    #expect(utimensat(AT_FDCWD, bodies + ".old.tmp", &times, 0) == 0)
    // An entry whose file was deleted is dropped.
    let cache = try SQLiteResponseCache(directory: directory.path, budget: 1_000)
    try Self.put(cache, "http://h/b", size: 10, at: 1)
    let lost = try #require(try cache.entries(partition: "p", url: "http://h/b").first)
    let lostFile = try #require(try cache.bodyPath(of: lost))
    unlink(lostFile)
    let reopened = try SQLiteResponseCache(directory: directory.path, budget: 1_000)
    let left = try FileManager.default.contentsOfDirectory(atPath: bodies)
    #expect(left.count == 2, "\(left)")
    #expect(left.contains(".young.tmp"))
    #expect(try reopened.allEntries().map(\.url) == ["http://h/a"])
  }

  @Test("a damaged index is started afresh, with a warning, and nothing beside the folder moves")
  func damagedIndex() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let folder = directory.path + "/cache"
    do {
      let cache = try SQLiteResponseCache(directory: folder, budget: 1_000)
      try Self.put(cache, "http://h/a", size: 10, at: 0)
    }
    let sibling = directory.path + "/courier.sqlite"
    try Data("not mine".utf8).write(to: URL(fileURLWithPath: sibling))
    for suffix in ["-wal", "-shm"] { unlink(folder + "/index.sqlite" + suffix) }
    try Data(repeating: 0x41, count: 4096).write(
      to: URL(fileURLWithPath: folder + "/index.sqlite"))
    let warnings = Mutex<[String]>([])
    let cache = try SQLiteResponseCache(
      directory: folder, budget: 1_000, warn: { line in warnings.withLock { $0.append(line) } })
    #expect(try cache.allEntries().isEmpty)
    #expect(warnings.withLock { $0.count } == 1)
    #expect(warnings.withLock { $0.first?.contains("was damaged") } == true)
    #expect(Self.bodyFiles(folder).isEmpty)
    #expect(try Data(contentsOf: URL(fileURLWithPath: sibling)) == Data("not mine".utf8))
    try Self.put(cache, "http://h/b", size: 10, at: 1)
    #expect(try cache.allEntries().count == 1)
  }

  @Test("kill -9 during admissions leaves only whole entries, within the budget, and no orphan")
  func killNine() async throws {
    try await offPool { try Self.killNine() }
  }

  static func killNine() throws {
    let probe = try #require(
      CrashTests.probe, "build the probe first: swift build --product courier-store-crash-probe")
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    var generator = SplitMix64(testSeed: 0xCA_C4E9)
    var next = 0
    for round in 0..<10 {
      let target = Int.random(in: 1...40, using: &generator)
      let context = "round \(round) (\(generator.seedDescription), target \(target))"
      let process = Process()
      process.executableURL = probe
      process.arguments = ["cache", "sqlite", directory.path, String(next)]
      let output = Pipe()
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      try process.run()
      var reported: [Int] = []
      var pending = ""
      while reported.count < target {
        let data = output.fileHandleForReading.availableData
        if data.isEmpty { break }
        pending += String(decoding: data, as: UTF8.self)
        while let newline = pending.firstIndex(of: "\n") {
          if let number = Int(pending[..<newline]) { reported.append(number) }
          pending = String(pending[pending.index(after: newline)...])
        }
      }
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      #expect(reported.count >= target, "\(context): the probe stopped on its own")
      next = (reported.last ?? next) + 1

      let cache = try SQLiteResponseCache(
        directory: directory.path + "/cache", budget: CacheProbe.budget)
      let entries = try cache.allEntries()
      #expect(entries.reduce(0) { $0 + $1.size } <= CacheProbe.budget, "\(context)")
      for entry in entries {
        let number = try #require(Int(entry.url.split(separator: "/").last ?? ""), "\(context)")
        #expect(
          try cache.body(of: entry) == CacheProbe.body(number), "\(context): \(entry.url) damaged")
      }
      // The last reported admission is the most recent entry: never evicted.
      if let last = reported.last {
        #expect(entries.contains { $0.url == CacheProbe.url(last) }, "\(context)")
      }
      // After the sweep at open, the named files are exactly the entries'.
      #expect(Self.bodyFiles(directory.path + "/cache").count == entries.count, "\(context)")
    }
  }
}

/// What the crash probe's `cache` mode admits (the same formulas as in the probe).
enum CacheProbe {
  static let budget = 256 * 1024
  static func url(_ number: Int) -> String { "http://probe.test/\(number)" }
  static func body(_ number: Int) -> Data {
    let size = (number &* 7_919) % 40_000 + 1
    return Data((0..<size).map { UInt8(truncatingIfNeeded: number &+ $0) })
  }
}
