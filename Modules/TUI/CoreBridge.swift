import CourierComposition
import CourierCore
import CourierDomain
import CourierPorts
import Foundation

/// The real core behind the interface: implements `TUIActions` over a `CourierEnvironment` and
/// feeds one `UpdateHub` from the core's state streams (the debounced path, the sync engine's
/// articles, outbox and issues, the uploader's progress). Nothing starts in `init`: `run()`
/// does, in the caller's task, and stops on cancellation.
public final class CoreBridge: TUIActions {
  /// How long a path must hold before the header shows it: short enough that a change shows
  /// within a second without a key (decision record 0650), long enough to skip a blip.
  public static let pathDelays = PathDebounceDelays(
    online: .milliseconds(300), offline: .milliseconds(600))

  private let environment: CourierEnvironment
  private let hub: UpdateHub
  private let connectivity: ConnectivityModel

  /// Creates the bridge.
  /// - Parameters:
  ///   - environment: the composition root's adapters.
  ///   - hub: where the updates go.
  ///   - clock: the clock the path delays are measured on.
  ///   - pathDelays: how long a path must hold before it shows.
  /// - Throws: what stops the local store from opening (named file, nothing reset).
  public init(
    environment: CourierEnvironment, hub: UpdateHub,
    clock: any Clock<Duration> = ContinuousClock(), pathDelays: PathDebounceDelays = pathDelays
  ) throws {
    self.environment = environment
    self.hub = hub
    self.connectivity = ConnectivityModel(
      monitor: environment.pathMonitor, clock: clock, delays: pathDelays)
  }

  /// The state for the first frame: the cached articles, so they show before any network.
  /// - Returns: the state.
  public func initialState() -> TUIState { TUIState() }

  /// Runs the path monitor and forwards every source to the hub until cancelled.
  /// - Throws: what stops a source from starting (the path monitor's socket).
  public func run() async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await self.connectivity.run() }
      group.addTask {
        for await path in self.connectivity.updates() { self.hub.send(.path(path.status)) }
      }
      defer { group.cancelAll() }
      while try await group.next() != nil {}
    }
  }

  /// Fetches the articles again.
  /// - Throws: `TUIActionError` until the sync engine is wired.
  public func refresh() async throws { throw Self.notWired }

  /// Sends the outbox now.
  /// - Throws: `TUIActionError` until the sync engine is wired.
  public func syncNow() async throws { throw Self.notWired }

  /// Creates an article.
  /// - Parameters:
  ///   - title: the title.
  ///   - body: the body.
  /// - Throws: `TUIActionError` until the sync engine is wired.
  public func addArticle(title: String, body: String) async throws { throw Self.notWired }

  /// Changes an article.
  /// - Parameters:
  ///   - id: the article.
  ///   - title: the title.
  ///   - body: the body.
  /// - Throws: `TUIActionError` until the sync engine is wired.
  public func editArticle(id: String, title: String, body: String) async throws {
    throw Self.notWired
  }

  /// Deletes an article.
  /// - Parameter id: the article.
  /// - Throws: `TUIActionError` until the sync engine is wired.
  public func deleteArticle(id: String) async throws { throw Self.notWired }

  /// Uploads a photo.
  /// - Parameter path: the path as typed.
  /// - Throws: `TUIActionError` until the uploader is wired.
  public func upload(path: String) async throws { throw Self.notWired }

  private static let notWired = TUIActionError(message: "not available in this build yet.")
}
