import Dispatch
import Foundation
import Testing

/// One reference backend for a whole suite, reset (`POST /__reset`) before each test by the
/// suite itself. Starting a backend costs a second or two of CPU: suites that start one per
/// test, all in parallel, starve a two-core machine.
public struct SharedBackend: SuiteTrait, TestScoping {
  /// The backend of the running suite.
  @TaskLocal public static var current: ReferenceBackend?

  /// Whether the backend serves HTTPS with the process's ``TestPKI``, and whether it requires
  /// a client certificate then.
  let https: Bool
  let requiresClientCertificate: Bool

  /// Creates the trait: plain HTTP.
  public init() {
    https = false
    requiresClientCertificate = false
  }

  /// Creates the trait: HTTPS with the process's ``TestPKI/shared()``.
  /// - Parameter requiresClientCertificate: whether the backend requires a client certificate.
  public init(httpsRequiringClientCertificate requiresClientCertificate: Bool) {
    https = true
    self.requiresClientCertificate = requiresClientCertificate
  }

  /// Starts the backend, runs the suite with it, stops it.
  /// - Parameters:
  ///   - test: the suite.
  ///   - testCase: unused.
  ///   - function: the suite's tests.
  /// - Throws: when the backend does not start, or what the tests throw.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    let tls =
      https
      ? ReferenceBackend.TLS(
        pki: try TestPKI.shared(), requiresClientCertificate: requiresClientCertificate) : nil
    let backend = try await ReferenceBackend(tls: tls)
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

  /// Starts one reference backend around the suite, serving HTTPS with the process's
  /// ``TestPKI`` and requiring its client certificate (mutual TLS).
  public static var sharedMutualTLSBackend: SharedBackend {
    SharedBackend(httpsRequiringClientCertificate: true)
  }
}
