import CourierCore
import CourierDomain
import CourierLinux
import CourierSystem
import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `courier get PATH`.
enum GetCommand {
  static func run(path: String, context: CommandContext) async throws -> ExitCode {
    let client = cachingClient(context)
    let request = try client.request(.get, path)
    try sameServer(try client.url(path), path: path, client: client, command: "get")
    let reply = try await client.exchange(request)
    let body = reply.body.bytes
    try DeliveryProof.apiReply(reply.response, body: body, attempts: reply.attempts)
    // The last good copy, answered while the server could not be reached (decision 2512).
    let staleAge = staleAge(reply.response)
    if context.global.json {
      var object: [String: JSONValue] = [
        "status": .string("ok"), "http_status": .int(reply.response.status.code),
        "attempts": .int(reply.attempts), "body": JSONLine.body(body),
      ]
      if let staleAge {
        object["cache"] = .string("stale")
        object["age_seconds"] = .int(staleAge)
      }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      if let staleAge { context.output.err("Offline: showing the copy from \(ago(staleAge)).\n") }
      context.output.out(bodyText(body, for: context.output))
    }
    return .success
  }

  /// The pipeline with the data folder's response cache (decision 2512); the plain pipeline,
  /// with a warning, when the cache cannot be opened (a get never fails for its cache).
  static func cachingClient(_ context: CommandContext) -> APIClient {
    let environment = context.environment
    do {
      let cache = try environment.openResponseCache(warn: {
        context.output.err("courier: warning: \($0)\n")
      })
      let partition = environment.responseCachePartition
      return environment.client(
        caching: CachingMiddleware(
          store: cache, partition: { partition }, revalidatesFresh: true))
    } catch let error as StoreError {
      context.output.err(
        "courier: warning: the response cache is not used: \(LogText.escaped(error.message))\n")
    } catch {
      context.output.err("courier: warning: the response cache is not used: \(error)\n")
    }
    return context.client
  }

  /// The age in seconds of a reply the cache answered because the server could not be reached;
  /// nil for any other reply.
  static func staleAge(_ response: HTTPResponse) -> Int? {
    guard response.headerFields[.courierCache] == "stale" else { return nil }
    return response.headerFields[.age].flatMap { Int($0) } ?? 0
  }

  /// "3 minutes ago", "just now", "2 days ago": an age as a person reads it.
  static func ago(_ seconds: Int) -> String {
    func unit(_ count: Int, _ name: String) -> String {
      "\(count) \(name)\(count == 1 ? "" : "s") ago"
    }
    switch seconds {
    case ..<5: return "just now"
    case ..<60: return unit(seconds, "second")
    case ..<3_600: return unit(seconds / 60, "minute")
    case ..<86_400: return unit(seconds / 3_600, "hour")
    default: return unit(seconds / 86_400, "day")
    }
  }

  /// A reply's body as printed without `--json`, ended by a line break: on a terminal as every
  /// untrusted text is printed (`LogText`, its own line breaks and tabs kept), so a body cannot
  /// drive the terminal; into a pipe or a file, its text exact (it is data there).
  static func bodyText(_ body: Data, for output: any CommandOutput) -> String {
    var text = String(decoding: body, as: UTF8.self)
    if output.isTerminal { text = LogText.escaped(text, keepingLineBreaks: true) }
    return text.hasSuffix("\n") ? text : text + "\n"
  }
}

extension GetCommand {
  /// Refuses an absolute URL on another origin than the base URL: PATH is relative to the
  /// base URL, and the session's token belongs to that server only (decision 0005; the
  /// pipeline would send such a request without the token, and the command would report a
  /// misleading "session expired").
  static func sameServer(_ url: URL, path: String, client: APIClient, command: String) throws {
    guard !RedirectRule.sameOrigin(url, client.baseURL) else { return }
    throw UsageError(
      "“\(LogText.escaped(path))” is on another server than the base URL "
        + "(\(LoggingTransport.redacted(client.baseURL))): paths are relative to the base URL. "
        + "To talk to another server, give it with --base-url.",
      command: command)
  }
}
