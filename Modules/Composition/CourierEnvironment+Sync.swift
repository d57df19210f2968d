import CourierCore
import CourierDomain
import CourierPorts

extension CourierEnvironment {
  /// A sync engine for articles over this environment's client and path monitor, with the
  /// configured conflict policy (`conflict_policy`). While watching, it waits on the real
  /// clock between replays after transient failures, jittered by the system's random source.
  /// - Parameters:
  ///   - store: the local store (from `openLocalStore()`).
  ///   - replaysAfterWrites: whether a write schedules a replay by itself (true for a
  ///     long-running app; a command that replays and reports itself passes false).
  /// - Returns: the engine.
  public func articleSyncEngine(store: any LocalStore, replaysAfterWrites: Bool = true)
    -> SyncEngine<Article>
  {
    SyncEngine<Article>(
      client: client, store: store, pathMonitor: pathMonitor,
      configuration: SyncEngine<Article>.Configuration(
        conflictPolicy: config.conflictPolicy, replaysAfterWrites: replaysAfterWrites),
      clock: ContinuousClock(), random: SystemRandomSource())
  }
}
