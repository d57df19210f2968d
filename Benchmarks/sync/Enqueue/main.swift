import CourierCore
import CourierDomain
// Queues N article creations in a data directory's local store, offline (nothing is sent),
// through the sync engine, for Benchmarks/sync/run.sh to time their replay by `courier sync`.
// Usage: sync-bench-enqueue DATA_DIR COUNT
import CourierLinux
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[2]), count > 0 else {
  FileHandle.standardError.write(Data("usage: sync-bench-enqueue DATA_DIR COUNT\n".utf8))
  exit(64)
}
var config = CourierConfig(environment: ProcessInfo.processInfo.environment)
config.dataDirectory = URL(fileURLWithPath: arguments[1], isDirectory: true)
do {
  let environment = try CourierEnvironment(config: config)
  let store = try environment.openLocalStore()
  let engine = SyncEngine<Article>(
    client: environment.client, store: store,
    configuration: .init(replaysAfterWrites: false))
  let start = ContinuousClock.now
  for index in 0..<count {
    let article = Article(
      id: UUID().uuidString.lowercased(), title: "Article \(index)",
      body: "Notes de cours iOS, article \(index).")
    try await engine.create(article)
  }
  let elapsed = ContinuousClock.now - start
  print("enqueued \(count) in \(elapsed)")
} catch {
  FileHandle.standardError.write(Data("sync-bench-enqueue: \(error)\n".utf8))
  exit(1)
}
