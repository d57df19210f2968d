import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The `Transport` port over libcurl directly, without URLSession in between.
///
/// One dedicated thread drives a curl multi handle (`curl_multi_poll`, woken by
/// `curl_multi_wakeup`), so connections are reused across requests, HTTP/2 is negotiated over
/// TLS, and cancelling only posts a message that the thread acts on at once (see
/// Docs/decisions/0500). Bodies are streamed by a read callback straight from their sources
/// (memory, files, file ranges): a multipart upload needs no temporary file. Failures are told
/// apart by `CURLcode` through `CurlErrorTable`. It never logs anything, headers included.
public final class CurlTransport: Transport {
  /// How the transport behaves; every field has a safe default.
  package struct Configuration: Sendable {
    /// The path monitor's current status, to tell "offline" from "host unreachable".
    package var pathStatus: @Sendable () -> PathStatus
    /// The largest response body held in memory; a longer one fails as `invalidResponse`.
    package var maxResponseBytes: Int
    /// What the TLS handshake trusts and presents; verification itself is always on.
    package var tls: TLS
    /// Whether to offer HTTP/2 (over TLS, by ALPN); plain `http://` always uses HTTP/1.1.
    package var allowsHTTP2: Bool
    /// Bodies of at least this many bytes ask `Expect: 100-continue` first, so a server that
    /// refuses (413, 401) does so before the body is sent.
    package var expectContinueThreshold: Int64
    /// The most connections kept open at once to one host (more transfers wait their turn).
    package var maxConnectionsPerHost: Int
    /// The size of the buffer libcurl fills from the read callback for each send.
    package var uploadBufferSize: Int

    /// Creates a configuration.
    /// - Parameters:
    ///   - pathStatus: the path monitor's current status.
    ///   - maxResponseBytes: the largest response body held in memory.
    ///   - tls: the CA bundle, the server's pinned keys and the client certificate.
    ///   - allowsHTTP2: whether to offer HTTP/2 over TLS.
    ///   - expectContinueThreshold: the body size from which `Expect: 100-continue` is sent.
    ///   - maxConnectionsPerHost: the most connections to one host.
    ///   - uploadBufferSize: libcurl's upload buffer, in bytes (16 KiB to 2 MiB).
    package init(
      pathStatus: @escaping @Sendable () -> PathStatus = { .unknown },
      maxResponseBytes: Int = 64 << 20, tls: TLS = TLS(), allowsHTTP2: Bool = true,
      expectContinueThreshold: Int64 = 64 << 10, maxConnectionsPerHost: Int = 6,
      uploadBufferSize: Int = 512 << 10
    ) {
      self.pathStatus = pathStatus
      self.maxResponseBytes = maxResponseBytes
      self.tls = tls
      self.allowsHTTP2 = allowsHTTP2
      self.expectContinueThreshold = expectContinueThreshold
      self.maxConnectionsPerHost = maxConnectionsPerHost
      self.uploadBufferSize = min(2 << 20, max(16 << 10, uploadBufferSize))
    }
  }

  /// What the TLS handshake trusts and presents (decision 2430). Certificates are always
  /// verified, against the system's trust store or the CA bundle; pins are checked on top.
  package struct TLS: Sendable, Equatable {
    /// A PEM bundle of the certificate authorities to trust instead of the system's.
    package var caBundle: URL?
    /// The SHA-256 pins of the server's public key (its DER SubjectPublicKeyInfo), each
    /// `sha256/BASE64` as OkHttp spells them, already checked: the server's key must match
    /// one of them. Empty: no pinning.
    package var pinnedPublicKeys: [String]
    /// A PEM client certificate for mutual TLS.
    package var clientCertificate: URL?
    /// The PEM key of the client certificate, unencrypted; nil when the certificate's file
    /// holds it.
    package var clientKey: URL?

    /// Creates the settings; the defaults trust the system's store and pin nothing.
    /// - Parameters:
    ///   - caBundle: a PEM bundle of trusted authorities; nil for the system's.
    ///   - pinnedPublicKeys: `sha256/BASE64` pins of the server's public key.
    ///   - clientCertificate: a PEM client certificate.
    ///   - clientKey: its PEM key, when not in the certificate's file.
    package init(
      caBundle: URL? = nil, pinnedPublicKeys: [String] = [], clientCertificate: URL? = nil,
      clientKey: URL? = nil
    ) {
      self.caBundle = caBundle
      self.pinnedPublicKeys = pinnedPublicKeys
      self.clientCertificate = clientCertificate
      self.clientKey = clientKey
    }

    /// The pins as `CURLOPT_PINNEDPUBLICKEY` takes them (`sha256//A;sha256//B`), nil without.
    var pinnedPublicKeysOption: String? {
      guard !pinnedPublicKeys.isEmpty else { return nil }
      return pinnedPublicKeys.map { pin in
        "sha256//" + (pin.hasPrefix("sha256/") ? String(pin.dropFirst(7)) : pin)
      }.joined(separator: ";")
    }
  }

  private let engine: CurlEngine
  private let configuration: Configuration
  /// The origins (`scheme://host:port`) that have answered a request of this transport.
  private let answered = Mutex<Set<String>>([])

  /// Creates a transport. Its thread starts with the first request.
  /// - Parameter configuration: the behaviour.
  package init(configuration: Configuration) {
    self.configuration = configuration
    self.engine = CurlEngine(configuration: configuration)
  }

  /// Creates a transport with default settings; its thread starts with the first request.
  /// - Parameter pathStatus: the path monitor's current status, which tells an offline device
  ///   from an unreachable host when a connection fails; unknown by default.
  public convenience init(pathStatus: @escaping @Sendable () -> PathStatus = { .unknown }) {
    self.init(configuration: Configuration(pathStatus: pathStatus))
  }

  deinit { engine.stop() }

  /// Sends a request with its body, each piece read from its source while sending (a read
  /// callback): memory stays flat whatever the files' sizes, and a multipart upload needs no
  /// temporary file.
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body: bytes, a whole file or segments; nil for none.
  ///   - options: the per-attempt deadline and the progress observer.
  /// - Returns: the response, of any status, and its body.
  /// - Throws: `CourierError`: `fileUnavailable` naming the file when a file or range is
  ///   missing or shorter than announced, `invalidInput` for a negative range, `invalidResponse`
  ///   for a reply that is not valid HTTP, or when no response was received.
  public func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    var segments: [BodySegment]?
    switch body?.contents {
    case nil: segments = nil
    case .bytes(let data): segments = [.bytes(data)]
    case .file(let file):
      let size = try BodyReader.fileSize(file, context: request.summary)
      segments = [.file(file, offset: 0, length: size)]
    case .segments(let pieces):
      try BodyReader.validate(pieces, context: request.summary)
      segments = pieces
    }
    // A HEAD has no body to write; a sink is otherwise the call's (decision 2500).
    let sink: BodyDestination =
      request.method == .head ? .memory : options.responseSink.map { .sink($0) } ?? .memory
    return try await perform(
      request, body: segments, sink: sink, options: options, progress: options.progress)
  }

  /// Sends a request and streams the response body into a file instead of memory (created or
  /// truncated), whatever its size or status.
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the request's in-memory body, if any.
  ///   - file: where the response body goes.
  ///   - options: the per-attempt deadline.
  ///   - progress: bytes received so far, and the total when the server announced it.
  /// - Returns: the response (its body is in the file).
  /// - Throws: `CourierError`: `fileUnavailable` when the file cannot be written, or when no
  ///   response was received.
  package func download(
    _ request: HTTPRequest, body: Data? = nil, to file: URL, options: TransportOptions,
    progress: (@Sendable (TransferProgress) -> Void)? = nil
  ) async throws -> HTTPResponse {
    let segments = body.map { [BodySegment.bytes($0)] }
    return try await perform(
      request, body: segments, sink: .file(file), options: options, progress: progress
    ).0
  }

  /// How many transfers are in flight or waiting for the transport's thread: zero once every
  /// call has returned and the thread has caught up, whatever was cancelled.
  package var activeTransfers: Int { engine.activeTransfers }

  /// The transport's thread, as a task executor: a task running there is resumed by each
  /// answer without a thread being woken, and hands its next request over the same way.
  public var taskExecutor: (any TaskExecutor)? { engine }

  /// Stops the transport's thread: transfers still running fail as `cancelled`, every
  /// connection is closed, and this returns once all of it is done. Later requests start a
  /// new thread.
  package func shutdown() async { await engine.shutdown() }

  /// Sends the request and follows same-origin redirects (`RedirectFollowing`, decision
  /// 0503) within the one deadline; libcurl's own following cannot be limited to one origin.
  private func perform(
    _ request: HTTPRequest, body: [BodySegment]?, sink: BodyDestination, options: TransportOptions,
    progress: (@Sendable (TransferProgress) -> Void)?
  ) async throws -> CurlAnswer {
    try await RedirectFollowing.run(request, deadline: options.deadline) { hop in
      try await performOnce(
        hop.request, body: hop.sendsBody ? body : nil, sink: sink,
        options: options.with(deadline: hop.deadline), progress: progress)
    }
  }

  private func performOnce(
    _ request: HTTPRequest, body: [BodySegment]?, sink: BodyDestination, options: TransportOptions,
    progress: (@Sendable (TransferProgress) -> Void)?
  ) async throws -> CurlAnswer {
    let origin = Self.origin(of: request)
    let transfer = try Transfer(
      request: request, body: body, sink: sink, deadline: options.deadline,
      idleTimeout: options.idleTimeout,
      asksToContinue: Self.asksToContinue(
        request, originAnswered: answered.withLock { $0.contains(origin) }),
      progress: progress, informational: options.informational,
      pathStatus: configuration.pathStatus)
    if Task.isCancelled { throw CourierError(.cancelled, context: request.summary) }
    let engine = self.engine
    let response = try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        if transfer.start(continuation) { engine.submit(transfer) }
      }
    } onCancel: {
      if transfer.cancel() { engine.abandon(transfer) }
    }
    answered.withLock { origins in
      if origins.count >= 64 { origins.removeAll() }
      origins.insert(origin)
    }
    return response
  }

  /// Whether a request whose body is large enough to ask first (`expectContinueThreshold`)
  /// sends `Expect: 100-continue` (decision 1303). It lets a server refuse (413, 401, a proxy)
  /// before the body, at the price of a round trip (up to a second with a server that never
  /// answers 100). Every body asks, except a tus `PATCH` (`application/offset+octet-stream`)
  /// to an origin that has already answered this transport: that server accepted the
  /// upload's length at its creation, each chunk lasts about a quarter of a second at the
  /// link's rate, and its refusals (409, 460) need the body or cost one chunk.
  /// - Parameters:
  ///   - request: the request.
  ///   - originAnswered: whether its origin has answered a request of this transport.
  /// - Returns: true to ask first.
  static func asksToContinue(_ request: HTTPRequest, originAnswered: Bool) -> Bool {
    guard originAnswered, request.method == .patch else { return true }
    let type = request.headerFields[.contentType]?.split(separator: ";").first.map {
      $0.trimmingSpacesAndTabs().lowercased()
    }
    return type != "application/offset+octet-stream"
  }

  /// `scheme://host:port`, lower-cased, the port filled in from the scheme.
  static func origin(of request: HTTPRequest) -> String {
    let scheme = request.scheme?.lowercased() ?? ""
    guard let url = request.url else { return "\(scheme)://" }
    let port = url.port ?? (scheme == "https" ? 443 : 80)
    return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
  }
}
