import Dispatch
import Foundation
import Testing

/// One reference backend for a whole suite, reset (`POST /__reset`) before each test by the
/// suite itself. Starting a backend costs a second or two of CPU: suites that start one per
/// test, all in parallel, starve a two-core machine.
public struct SharedBackend: SuiteTrait, TestScoping {
  /// The backend of the running suite.
  @TaskLocal public static var current: ReferenceBackend?

  /// Creates the trait.
  public init() {}

  /// Starts the backend, runs the suite with it, stops it.
  /// - Parameters:
  ///   - test: the suite.
  ///   - testCase: unused.
  ///   - function: the suite's tests.
  /// - Throws: when the backend does not start, or what the tests throw.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    let backend = try await ReferenceBackend()
    var failure: (any Error)?
    do {
      try await Self.$current.withValue(backend) { try await function() }
    } catch {
      failure = error
    }
    backend.stop()
    if let failure { throw failure }
  }

  /// The running suite's backend, reset to a clean state.
  /// - Returns: the backend.
  /// - Throws: when the suite has no shared backend or the reset fails.
  public static func fresh() async throws -> ReferenceBackend {
    guard let backend = current else { throw POSIXError(.ENODEV) }
    try await backend.call("POST", "/__reset")
    return backend
  }
}

extension Trait where Self == SharedBackend {
  /// Starts one reference backend around the suite.
  public static var sharedBackend: SharedBackend { SharedBackend() }
}
