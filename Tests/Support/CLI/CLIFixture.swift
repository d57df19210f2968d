import CourierDomain
import CourierSystem
import CourierTestSupport
import Foundation
import Testing

/// The set-up the CLI's integration suites share: how a suite runs `courier` (in-process, or the
/// built binary as a process of its own), a logged-in data folder, and what the reference
/// backend holds. A suite keeps one as `let cli = CLIFixture("courier-sync", …)` and calls
/// `cli.client(backend)`, `cli.run(url, ["sync"], dataDir: dir)`.
package struct CLIFixture: Sendable {
  /// A base URL nothing listens on (connection refused at once): "offline".
  package static let deadURL = "http://127.0.0.1:9"

  /// The start of the names of the suite's temporary folders (`courier-sync-<UUID>`).
  package let prefix: String
  /// Flags put before every command's own (`--max-attempts 1`); a command's own come later and
  /// win.
  package let globalFlags: [String]
  /// Variables every command runs with, in-process or as a process; a call's own win.
  package let environment: [String: String]
  /// The config file each new client folder gets (`$XDG_CONFIG_HOME/courier/config.json`).
  package let config: String?

  /// A fixture for one suite.
  /// - Parameters:
  ///   - prefix: the start of its temporary folders' names.
  ///   - globalFlags: flags put before every command's own.
  ///   - environment: variables every command runs with.
  ///   - config: the config file of every client folder (collections it declares), if any.
  package init(
    _ prefix: String, globalFlags: [String] = [], environment: [String: String] = [:],
    config: String? = nil
  ) {
    self.prefix = prefix
    self.globalFlags = globalFlags
    self.environment = environment
    self.config = config
  }

  // MARK: - In-process runs

  /// A new empty folder for one test, named after the suite; the test removes it.
  /// - Returns: its URL.
  /// - Throws: when it cannot be created.
  package func temporaryDirectory() throws -> URL {
    try InProcessCLI.temporaryDirectory(prefix)
  }

  /// Runs one command in-process, with the fixture's flags and environment.
  /// - Parameters:
  ///   - baseURL: the server (``deadURL`` for none).
  ///   - arguments: the command and its flags.
  ///   - dataDir: home, config (`cfg/`) and data folder of this client.
  ///   - input: standard input.
  ///   - environment: variables added to (or replacing) the fixture's.
  /// - Returns: the exit status and the output.
  package func run(
    _ baseURL: String, _ arguments: [String], dataDir: URL, input: String? = nil,
    environment: [String: String] = [:]
  ) async -> CLIRun {
    await InProcessCLI.run(
      baseURL, arguments, dataDir: dataDir, input: input,
      environment: self.environment.merging(environment) { $1 }, globalFlags: globalFlags)
  }

  /// Runs one command in-process against `backend`; see ``run(_:_:dataDir:input:environment:)``.
  /// - Parameters:
  ///   - backend: the server.
  ///   - arguments: the command and its flags.
  ///   - dataDir: home, config and data folder of this client.
  ///   - input: standard input.
  ///   - environment: variables added to (or replacing) the fixture's.
  /// - Returns: the exit status and the output.
  package func run(
    _ backend: ReferenceBackend, _ arguments: [String], dataDir: URL, input: String? = nil,
    environment: [String: String] = [:]
  ) async -> CLIRun {
    await run(
      backend.url.absoluteString, arguments, dataDir: dataDir, input: input,
      environment: environment)
  }

  /// Logs `user` in (password `secret` on standard input) in an existing data folder; a refused
  /// login fails the test.
  /// - Parameters:
  ///   - baseURL: the server.
  ///   - user: who logs in.
  ///   - dataDir: the client's folder.
  ///   - sourceLocation: where a failure is reported.
  /// - Throws: when the login fails.
  package func login(
    _ baseURL: String, user: String = "alice", dataDir: URL,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let login = await run(
      baseURL, ["login", "--username", user, "--password-stdin"], dataDir: dataDir,
      input: "secret\n")
    try #require(login.code == 0, "\(login.output.stderr)", sourceLocation: sourceLocation)
  }

  /// A new client folder, with the fixture's config file, logged in as `user`; the test removes
  /// it.
  /// - Parameters:
  ///   - baseURL: the server.
  ///   - user: who logs in.
  ///   - sourceLocation: where a failure is reported.
  /// - Returns: the folder (home, config and data folder of the client).
  /// - Throws: when the folder cannot be made or the login fails.
  package func client(
    _ baseURL: String, user: String = "alice", sourceLocation: SourceLocation = #_sourceLocation
  ) async throws -> URL {
    let dir = try temporaryDirectory()
    if let config {
      let folder = dir.appendingPathComponent("cfg/courier")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      try Data(config.utf8).write(to: folder.appendingPathComponent("config.json"))
    }
    try await login(baseURL, user: user, dataDir: dir, sourceLocation: sourceLocation)
    return dir
  }

  /// A new client folder logged in to `backend`, as the base URL's `client` makes it.
  /// - Parameters:
  ///   - backend: the server.
  ///   - user: who logs in.
  ///   - sourceLocation: where a failure is reported.
  /// - Returns: the folder.
  /// - Throws: when the folder cannot be made or the login fails.
  package func client(
    _ backend: ReferenceBackend, user: String = "alice",
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws -> URL {
    try await client(backend.url.absoluteString, user: user, sourceLocation: sourceLocation)
  }

  /// The outbox as `courier outbox --json` reports it (`pending`, `rejected`, `entries`, …); a
  /// listing that fails fails the test.
  /// - Parameters:
  ///   - baseURL: the server (the listing is local: any will do).
  ///   - dataDir: the client's folder.
  ///   - sourceLocation: where a failure is reported.
  /// - Returns: the listing's JSON object.
  /// - Throws: when the listing fails or prints no JSON.
  package func outbox(
    _ baseURL: String, dataDir: URL, sourceLocation: SourceLocation = #_sourceLocation
  ) async throws -> [String: Any] {
    let listing = await run(baseURL, ["--json", "outbox"], dataDir: dataDir)
    try #require(listing.code == 0, "\(listing.output.stderr)", sourceLocation: sourceLocation)
    return try #require(
      listing.lines.last, "\(listing.output.stdout)", sourceLocation: sourceLocation)
  }

  // MARK: - The built binary

  /// The variables a `courier` process of this client runs with: its home and config folder,
  /// a plain PATH, the fixture's environment, then `extra`.
  /// - Parameters:
  ///   - dataDir: the client's folder.
  ///   - extra: variables added to (or replacing) those.
  /// - Returns: the environment.
  package func processEnvironment(dataDir: URL, _ extra: [String: String] = [:]) -> [String: String]
  {
    [
      "HOME": dataDir.path, "XDG_CONFIG_HOME": dataDir.appendingPathComponent("cfg").path,
      "PATH": "/usr/bin:/bin",
    ].merging(environment) { $1 }.merging(extra) { $1 }
  }

  /// The built `courier`, set up (not started) to run `arguments` for this client, its output
  /// and input `/dev/null` until the caller says otherwise.
  /// - Parameters:
  ///   - baseURL: the server.
  ///   - arguments: the command and its flags.
  ///   - dataDir: the client's folder.
  ///   - environment: variables added to ``processEnvironment(dataDir:_:)``'s.
  ///   - globalFlags: flags before `arguments`; the fixture's when nil.
  /// - Returns: the process.
  /// - Throws: when `courier` has not been built.
  package func process(
    _ baseURL: String, _ arguments: [String], dataDir: URL, environment: [String: String] = [:],
    globalFlags: [String]? = nil
  ) throws -> Process {
    let process = Process()
    process.executableURL = try InProcessCLI.builtCourier()
    process.arguments =
      ["--base-url", baseURL, "--data-dir", dataDir.path] + (globalFlags ?? self.globalFlags)
      + arguments
    process.environment = processEnvironment(dataDir: dataDir, environment)
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    process.standardError = FileHandle(forWritingAtPath: "/dev/null")
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    return process
  }

  /// Runs the built `courier` to its end as a process of its own (``ChildProcess``), as a
  /// person runs it.
  /// - Parameters:
  ///   - backend: the server.
  ///   - arguments: the command and its flags.
  ///   - dataDir: the client's folder.
  ///   - environment: variables added to ``processEnvironment(dataDir:_:)``'s.
  /// - Returns: how it ended and what it printed.
  /// - Throws: when `courier` has not been built or cannot start.
  package func runProcess(
    _ backend: ReferenceBackend, _ arguments: [String], dataDir: URL,
    environment: [String: String] = [:]
  ) async throws -> ChildProcess.Result {
    let binary = try InProcessCLI.builtCourier()
    return try await ChildProcess.run(
      [binary.path, "--base-url", backend.url.absoluteString, "--data-dir", dataDir.path]
        + globalFlags + arguments,
      environment: processEnvironment(dataDir: dataDir, environment))
  }

  // MARK: - The server's side

  /// A bearer token of the backend's own, to read what it stored.
  /// - Parameters:
  ///   - backend: the server.
  ///   - user: whose token (photos are per user; articles and notes are everyone's).
  /// - Returns: the access token.
  /// - Throws: when the backend gives none.
  package static func token(_ backend: ReferenceBackend, user: String = "alice") async throws
    -> String
  {
    let (_, body) = try await backend.call(
      "POST", "/auth/token", json: #"{"username":"\#(user)","password":"secret"}"#)
    let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    return try #require(object["access_token"] as? String)
  }

  /// What the backend lists at `path` (`/articles`, `/notes`, `/photos`) for `user`.
  /// - Parameters:
  ///   - path: the list's path.
  ///   - backend: the server.
  ///   - user: who asks.
  /// - Returns: the list's objects.
  /// - Throws: when the answer is not 200 with a JSON list.
  package static func serverList(
    _ path: String, on backend: ReferenceBackend, user: String = "alice"
  ) async throws -> [[String: Any]] {
    let bearer = try await token(backend, user: user)
    let (status, body) = try await backend.call(
      "GET", path, headers: ["Authorization": "Bearer \(bearer)"])
    try #require(status == 200, "GET \(path): \(status)")
    return try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
  }

  /// The articles the backend holds.
  /// - Parameter backend: the server.
  /// - Returns: the articles.
  /// - Throws: when they cannot be read.
  package static func articles(_ backend: ReferenceBackend) async throws -> [[String: Any]] {
    try await serverList("/articles", on: backend)
  }

  /// alice's photos as the backend stores them (`sha256`, `size`, `title`, …).
  /// - Parameter backend: the server.
  /// - Returns: the photos.
  /// - Throws: when they cannot be read.
  package static func photos(_ backend: ReferenceBackend) async throws -> [[String: Any]] {
    try await serverList("/photos", on: backend)
  }

  /// The tus uploads the backend holds (`GET /__uploads`: offset, state, bytes received, key).
  /// - Parameter backend: the server.
  /// - Returns: the uploads, oldest first.
  /// - Throws: when the answer is not a JSON list.
  package static func uploads(_ backend: ReferenceBackend) async throws -> [[String: Any]] {
    let (_, body) = try await backend.call("GET", "/__uploads")
    return try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]])
  }

  /// How many requests the backend holds now (`POST /__hold`), waiting to be released: a test
  /// waits for one before it acts, instead of guessing how long a request takes.
  /// - Parameter backend: the server.
  /// - Returns: the number held.
  /// - Throws: when the call fails.
  package static func heldRequests(_ backend: ReferenceBackend) async throws -> Int {
    let (_, body) = try await backend.call("GET", "/__hold")
    let state = try JSONSerialization.jsonObject(with: body) as? [String: Any]
    return state?["held"] as? Int ?? 0
  }

  /// Checks that the backend stores exactly one photo, with the bytes of `file` (its SHA-256
  /// and size) and, when given, its title.
  /// - Parameters:
  ///   - backend: the server.
  ///   - file: the original.
  ///   - title: the title it was sent with.
  ///   - sourceLocation: where a failure is reported.
  /// - Throws: when the photos or the file cannot be read.
  package static func expectOnePhoto(
    _ backend: ReferenceBackend, of file: URL, title: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let stored = try await photos(backend)
    #expect(stored.count == 1, sourceLocation: sourceLocation)
    let photo = try #require(stored.first, sourceLocation: sourceLocation)
    #expect(photo["sha256"] as? String == (try sha256(file)), sourceLocation: sourceLocation)
    let size = try #require(
      (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?
        .intValue, sourceLocation: sourceLocation)
    #expect(photo["size"] as? Int == size, sourceLocation: sourceLocation)
    if let title {
      #expect(photo["title"] as? String == title, sourceLocation: sourceLocation)
    }
  }

  // MARK: - Files

  /// Removes a test's folders, whatever is in them (a `defer` of one line for several clients).
  /// - Parameter folders: the folders.
  package static func remove(_ folders: URL...) {
    for folder in folders { try? FileManager.default.removeItem(at: folder) }
  }

  /// A file of seeded random bytes (not an image, and nothing on the way can make it smaller):
  /// the same seed gives the same bytes on every run.
  /// - Parameters:
  ///   - dir: where it is written.
  ///   - bytes: its size.
  ///   - name: its name in `dir` (an existing file is replaced).
  ///   - seed: the generator's seed; another seed gives other bytes.
  /// - Returns: its URL.
  /// - Throws: when it cannot be written.
  package static func randomFile(
    in dir: URL, bytes: Int, name: String = "data.bin", seed: UInt64 = 1
  ) throws -> URL {
    var generator = SplitMix64(seed: seed)
    var data = Data(count: bytes)
    // A word at a time (a byte loop takes seconds for 64 MiB in a debug build), little-endian so
    // the bytes are the same on every machine.
    data.withUnsafeMutableBytes { buffer in
      let words = buffer.count / 8
      for index in 0..<words {
        buffer.storeBytes(
          of: generator.next().littleEndian, toByteOffset: index * 8, as: UInt64.self)
      }
      let tail = generator.next()
      for offset in 0..<(buffer.count - words * 8) {
        buffer[words * 8 + offset] = UInt8(truncatingIfNeeded: tail >> (8 * offset))
      }
    }
    let url = dir.appendingPathComponent(name)
    try data.write(to: url)
    return url
  }

  /// The SHA-256 of a file's bytes, in hex, as the backend reports a stored file's.
  /// - Parameter url: the file.
  /// - Returns: the lowercase hex digest.
  /// - Throws: when it cannot be read.
  package static func sha256(_ url: URL) throws -> String {
    SHA256.hex(SHA256.hash(try Data(contentsOf: url)))
  }

  /// The files in a data folder's `queued-uploads/` (its lock file aside), sorted.
  /// - Parameter dir: the client's folder.
  /// - Returns: their names (`<id>.body`, `<id>.sent`).
  package static func queuedUploads(in dir: URL) -> [String] {
    let folder = dir.appendingPathComponent("queued-uploads")
    return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
      .filter { !$0.hasPrefix(".") }.sorted()
  }

  /// ``queuedUploads(in:)`` once no delivered bytes are still being removed (`<id>.sent`: a
  /// detached process frees their blocks, decision 1303), waited for with a generous bound.
  /// - Parameter dir: the client's folder.
  /// - Returns: the names left.
  package static func settledQueuedUploads(in dir: URL) async -> [String] {
    let deadline = ContinuousClock.now + .seconds(120)
    while queuedUploads(in: dir).contains(where: { $0.hasSuffix(".sent") }),
      ContinuousClock.now < deadline
    {
      try? await Task.sleep(for: .milliseconds(20))
    }
    return queuedUploads(in: dir)
  }
}
