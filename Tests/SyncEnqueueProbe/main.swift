import CourierCore
import CourierDomain
// Queues writes in a data directory's local store, offline (nothing is sent), for
// Benchmarks/sync/run.sh to time their replay by `courier sync`:
//   sync-bench-enqueue creates DATA_DIR COUNT       COUNT article creations
//   sync-bench-enqueue edits DATA_DIR PER_RECORD    PER_RECORD edits of every stored article,
//                                                   queued round by round, each attempted once
//                                                   (as if sent while offline) so that none is
//                                                   folded into the one before
// The store is opened with synchronous=NORMAL: this is set-up, not what is measured (the
// replay runs in `courier sync` on the composition root's store, synchronous=FULL).
import CourierLinux
import CourierSQLite
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 4, ["creates", "edits"].contains(arguments[1]),
  let count = Int(arguments[3]), count > 0
else {
  FileHandle.standardError.write(
    Data("usage: sync-bench-enqueue creates|edits DATA_DIR COUNT\n".utf8))
  exit(64)
}
var config = CourierConfig(environment: ProcessInfo.processInfo.environment)
config.dataDirectory = URL(fileURLWithPath: arguments[2], isDirectory: true)
do {
  let environment = try CourierEnvironment(config: config)
  // Creates the data folder and the schema as courier does, then reopens for the set-up.
  (try environment.openLocalStore() as? SQLiteLocalStore)?.close()
  let store = try SQLiteLocalStore(
    path: config.dataDirectory.appendingPathComponent("courier.sqlite").path,
    options: .init(synchronous: .normal))
  defer { store.close() }
  let engine = SyncEngine<Article>(client: environment.client, store: store)
  let start = ContinuousClock.now
  var queued = 0
  if arguments[1] == "creates" {
    for index in 0..<count {
      let article = Article(
        id: UUID().uuidString.lowercased(), title: "Article \(index)",
        body: "Notes de cours iOS, article \(index).")
      try await engine.create(article)
      queued += 1
    }
  } else {
    let articles = try await engine.cached().items.map(\.value).sorted { $0.id < $1.id }
    for round in 1...count {
      for var article in articles {
        article.body = "Edit \(round) of \(article.title)."
        let receipt = try await engine.update(article)
        if let id = receipt.operationID { try store.recordAttempt(id) }
        queued += 1
      }
    }
  }
  let elapsed = ContinuousClock.now - start
  print("queued \(queued) \(arguments[1]) in \(elapsed)")
} catch {
  FileHandle.standardError.write(Data("sync-bench-enqueue: \(error)\n".utf8))
  exit(1)
}
