import Foundation
import Synchronization

/// A throwaway certificate authority and what it signed, made by `Backend/make-test-certs.sh`
/// in a temporary folder: a server certificate for 127.0.0.1, ::1 and localhost, another one
/// from the same CA with another key (what a pin refuses), a client certificate for mutual
/// TLS, and the pins of both server keys. One per test process (``shared()``).
public struct TestPKI: Sendable {
  /// The folder holding the files.
  public let directory: URL

  /// A file of the folder.
  public func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

  /// The CA's certificate: the bundle a client trusts.
  public var ca: URL { file("ca.pem") }
  /// The server's certificate.
  public var server: URL { file("server.pem") }
  /// The server's key.
  public var serverKey: URL { file("server-key.pem") }
  /// Another server certificate from the same CA, with another key.
  public var other: URL { file("other.pem") }
  /// Its key.
  public var otherKey: URL { file("other-key.pem") }
  /// The client certificate (CN alice).
  public var client: URL { file("client.pem") }
  /// Its key.
  public var clientKey: URL { file("client-key.pem") }
  /// The server key's pin, `sha256/BASE64`.
  public let serverPin: String
  /// The other key's pin.
  public let otherPin: String

  /// Makes a PKI in a folder (created, or its files replaced).
  /// - Parameters:
  ///   - directory: the folder; a new temporary one by default (the caller removes it).
  ///   - sans: more subject alternative names for the server (`IP:10.0.0.1`).
  /// - Throws: when openssl fails.
  public init(
    directory: URL = FileManager.default.temporaryDirectory.appendingPathComponent(
      "courier-pki-\(UUID().uuidString)"),
    sans: [String] = []
  ) throws {
    self.directory = directory
    let script = ReferenceBackend.repositoryRoot.appendingPathComponent(
      "Backend/make-test-certs.sh")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = [script.path, directory.path] + sans.flatMap { ["--san", $0] }
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw POSIXError(.EIO) }
    let folder = directory
    func pin(_ name: String) throws -> String {
      try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        .trimmingCharacters(in: .whitespacesAndNewlines)
    }
    serverPin = try pin("server.pin")
    otherPin = try pin("other.pin")
  }

  private static let made = Mutex<Result<TestPKI, POSIXError>?>(nil)

  /// Where the process's one PKI lives; removed when the process exits.
  static let sharedDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "courier-pki-\(getpid())-\(UUID().uuidString)")

  /// The process's one PKI, made on first use (a fraction of a second of openssl) and removed
  /// when the process exits.
  /// - Returns: the PKI.
  /// - Throws: when it could not be made.
  public static func shared() throws -> TestPKI {
    try made.withLock { made in
      if let made { return try made.get() }
      let result: Result<TestPKI, POSIXError>
      atexit { try? FileManager.default.removeItem(at: TestPKI.sharedDirectory) }
      do {
        result = .success(try TestPKI(directory: sharedDirectory))
      } catch {
        result = .failure(error as? POSIXError ?? POSIXError(.EIO))
      }
      made = result
      return try result.get()
    }
  }

  /// The `courier` variables that trust the CA and present the client certificate.
  public var clientEnvironment: [String: String] {
    [
      "COURIER_CA_BUNDLE": ca.path, "COURIER_CLIENT_CERTIFICATE": client.path,
      "COURIER_CLIENT_KEY": clientKey.path,
    ]
  }

  /// `curl`'s arguments that trust the CA and present the client certificate.
  public var curlArguments: [String] {
    ["--cacert", ca.path, "--cert", client.path, "--key", clientKey.path]
  }
}
