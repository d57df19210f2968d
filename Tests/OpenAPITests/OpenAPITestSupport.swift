import CourierCore
import CourierDomain
import CourierPorts
import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime
import Synchronization
import Testing

/// A request as a generated client makes one: the path (and query) relative to the server URL,
/// no scheme, no authority.
func generatedRequest(
  _ method: HTTPRequest.Method, _ path: String, headerFields: HTTPFields = [:]
) -> HTTPRequest {
  HTTPRequest(method: method, scheme: nil, authority: nil, path: path, headerFields: headerFields)
}

/// Calls a transport the way a generated client's operation does (the runtime's
/// `UniversalClient`, which wraps whatever the transport throws in a `ClientError`).
func generatedCall(
  _ transport: any ClientTransport, serverURL: URL, operationID: String = "op",
  request: HTTPRequest, body: HTTPBody? = nil, middlewares: [any ClientMiddleware] = []
) async throws -> (HTTPResponse, Data?) {
  let client = UniversalClient(
    serverURL: serverURL, transport: transport, middlewares: middlewares)
  return try await client.send(
    input: operationID, forOperation: operationID,
    serializer: { _ in (request, body) },
    deserializer: { response, body in
      (response, try await collect(body))
    })
}

/// A folder of its own for a test's spooled bodies, to see what is left in it.
final class ScratchFolder: Sendable {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("courier-openapi-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  var contents: [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? ["<unreadable>"]
  }

  deinit { try? FileManager.default.removeItem(at: url) }
}

/// A body that can be read once and says nothing of its length, as a generated multipart
/// request's is.
func singlePassBody(_ bytes: Data, chunk: Int = 4096) -> HTTPBody {
  let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
  var offset = 0
  while offset < bytes.count {
    let end = min(offset + chunk, bytes.count)
    continuation.yield(HTTPBody.ByteChunk(bytes[offset..<end]))
    offset = end
  }
  continuation.finish()
  return HTTPBody(stream, length: .unknown)
}

/// Deterministic bytes of a length.
func sampleBytes(_ count: Int) -> Data {
  Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
}

/// A transport that records the options of each call and answers 200 with the request body's
/// length: for what `InMemoryTransport` does not show.
final class OptionsRecorder: Transport {
  private let recorded = Mutex<[TransportOptions]>([])
  var options: [TransportOptions] { recorded.withLock { $0 } }

  func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    recorded.withLock { $0.append(options) }
    return (HTTPResponse(status: .ok), ResponseBody(bytes: Data("\(body?.length ?? 0)".utf8)))
  }
}

/// Ordered lines from several tasks.
final class Lines: Sendable {
  private let lines = Mutex<[String]>([])
  func append(_ line: String) { lines.withLock { $0.append(line) } }
  var all: [String] { lines.withLock { $0 } }
}

/// Retry events, for the attempts a call made.
final class RetryEvents: Sendable {
  private let events = Mutex<[RetryEvent]>([])
  func append(_ event: RetryEvent) { events.withLock { $0.append(event) } }
  var all: [RetryEvent] { events.withLock { $0 } }
}

/// A body's bytes, all of them; nil for none.
func collect(_ body: HTTPBody?, upTo limit: Int = 1 << 30) async throws -> Data? {
  guard let body else { return nil }
  return try await Data(collecting: body, upTo: limit)
}
