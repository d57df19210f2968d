import CSQLiteShim
// courier-store-crash-probe: drives a local store from a separate process, for the crash test
// (killed with SIGKILL at a random point) and for the durability benchmark.
//
//   courier-store-crash-probe enqueue <sqlite|file> <path> <start>
//       applies and enqueues operation start, start+1, ... forever; after each call returns,
//       prints its number on its own line and flushes stdout.
//   courier-store-crash-probe cache sqlite <dir> <start>
//       admits reply start, start+1, ... to a response cache in <dir>/cache (256 KiB budget)
//       forever; after each admission returns, prints its number and flushes stdout.
//   courier-store-crash-probe bench <sqlite|sqlite-normal|file|fdatasync|fdatasync-overwrite>
//       <dir> <count>
//       times <count> durable enqueues (or raw 4 KiB write+fdatasync appends) and prints one
//       JSON line: {"adapter","count","seconds","per_second","p50_us","p99_us"}.
//   courier-store-crash-probe settings sqlite <dir> <n>
//       opens a store, writes operation n and prints "taken" when SQLite runs with the
//       settings for short processes (decision 1410), "defaults" otherwise.
//   courier-store-crash-probe vfs <sqlite|sqlite-kept> <dir> <n>
//       opens a store, writes operation n, prints what Courier's VFS did in this process
//       ("kept=K synced=S plain=P", decision 1411) and ends with _exit, as `courier` does.
import CourierDomain
import CourierFileStore
import CourierPorts
import CourierSQLite
import Foundation
import HTTPTypes

#if canImport(Glibc)
  import Glibc
#endif

/// The deterministic operation id of operation `n`, shared with the crash test.
func operationID(_ n: Int) -> UUID {
  UUID(uuidString: String(format: "00000000-0000-4000-8000-%012x", n)) ?? UUID()
}

func open(_ adapter: String, _ path: String) throws -> any LocalStore {
  switch adapter {
  case "sqlite": return try SQLiteLocalStore(path: path + "/store.sqlite")
  case "sqlite-kept":
    return try SQLiteLocalStore(
      path: path + "/store.sqlite", options: .init(checkpointOnClose: false))
  case "sqlite-normal":
    return try SQLiteLocalStore(
      path: path + "/store.sqlite", options: .init(synchronous: .normal))
  case "file": return try FileLocalStore(directory: path + "/store")
  default: throw StoreError(.invalidInput, "unknown adapter \(adapter)")
  }
}

func write(_ store: any LocalStore, _ n: Int) throws {
  let key = RecordKey(collection: "articles", id: "r\(n)")
  let payload: JSONValue = .object(["title": .string("title \(n)"), "body": .string("body")])
  try store.applyAndEnqueue(
    .put(key, payload: payload),
    OutboxOperation(
      id: operationID(n), key: key, kind: .create, payload: payload, baseVersion: nil,
      enqueuedAt: Date()))
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func report(_ adapter: String, _ latencies: [UInt64], _ total: UInt64) {
  let sorted = latencies.sorted()
  let seconds = Double(total) / 1e9
  func percentile(_ p: Double) -> Double {
    sorted.isEmpty ? 0 : Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e3
  }
  print(
    "{\"adapter\":\"\(adapter)\",\"count\":\(latencies.count),\"seconds\":\(seconds),"
      + "\"per_second\":\(Double(latencies.count) / seconds),\"p50_us\":\(percentile(0.5)),"
      + "\"p99_us\":\(percentile(0.99))}")
}

/// Raw 4 KiB write + fdatasync: appended to a growing file (as the file journal does), or
/// written over the same block (as SQLite's WAL does once it has grown).
func rawSync(_ directory: String, _ count: Int, overwrite: Bool) throws {
  let path = directory + "/raw-fdatasync.bin"
  let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | (overwrite ? 0 : O_APPEND), 0o600)
  guard fd >= 0 else { throw StoreError(.io, "cannot create \(path)") }
  defer { Glibc.close(fd) }
  let block = [UInt8](repeating: 0x5A, count: 4096)
  var latencies: [UInt64] = []
  let start = now()
  for _ in 0..<count {
    let begin = now()
    let written = block.withUnsafeBytes {
      overwrite
        ? pwrite(fd, $0.baseAddress, $0.count, 0) : Glibc.write(fd, $0.baseAddress, $0.count)
    }
    guard written == block.count, fdatasync(fd) == 0 else {
      throw StoreError(.io, "write or fdatasync failed on \(path)")
    }
    latencies.append(now() - begin)
  }
  report(overwrite ? "fdatasync-overwrite" : "fdatasync", latencies, now() - start)
}

func main() throws {
  let arguments = CommandLine.arguments
  guard arguments.count == 5, let number = Int(arguments[4]) else {
    FileHandle.standardError.write(
      Data(
        "usage: courier-store-crash-probe enqueue|cache|bench|settings|vfs <adapter> <path> <n>\n"
          .utf8))
    exit(64)
  }
  let (mode, adapter, path) = (arguments[1], arguments[2], arguments[3])
  switch mode {
  case "enqueue":
    let store = try open(adapter, path)
    var n = number
    while true {
      try write(store, n)
      print(n)
      fflush(nil)
      n += 1
    }
  case "cache":
    // Admissions to the response cache until killed; each number printed once it returned
    // (ResponseCacheStoreTests.killNine checks what is left).
    let cache = try SQLiteResponseCache(directory: path + "/cache", budget: 256 * 1024)
    var n = number
    while true {
      let size = (n &* 7_919) % 40_000 + 1
      let body = Data((0..<size).map { UInt8(truncatingIfNeeded: n &+ $0) })
      var fields = HTTPFields()
      fields[.eTag] = "\"\(n)\""
      try cache.store(
        partition: "p", url: "http://probe.test/\(n)", varyValues: [:], status: 200,
        fields: fields, body: body, now: Date())
      print(n)
      fflush(nil)
      n += 1
    }
  case "settings":
    let store = try open(adapter, path)
    try write(store, number)
    print(SQLiteLocalStore.runsWithShortProcessSettings ? "taken" : "defaults")
  case "vfs":
    let store = try open(adapter, path)
    try write(store, number)
    print(
      "kept=\(courier_sqlite_vfs_count(0)) synced=\(courier_sqlite_vfs_count(1)) "
        + "plain=\(courier_sqlite_vfs_count(2))")
    fflush(nil)
    // As `courier` ends: no close (decision 1410), the log left as the commit synced it.
    _exit(0)
  case "bench" where adapter == "fdatasync" || adapter == "fdatasync-overwrite":
    try rawSync(path, number, overwrite: adapter == "fdatasync-overwrite")
  case "bench":
    let store = try open(adapter, path)
    var latencies: [UInt64] = []
    latencies.reserveCapacity(number)
    let start = now()
    for n in 0..<number {
      let begin = now()
      try write(store, n)
      latencies.append(now() - begin)
    }
    report(adapter, latencies, now() - start)
  default:
    FileHandle.standardError.write(Data("unknown mode \(mode)\n".utf8))
    exit(64)
  }
}

do {
  try main()
} catch {
  FileHandle.standardError.write(Data("courier-store-crash-probe: \(error)\n".utf8))
  exit(1)
}
