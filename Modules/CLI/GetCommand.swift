import CourierCore
import CourierDomain
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `courier get PATH`.
enum GetCommand {
  static func run(path: String, context: CommandContext) async throws -> ExitCode {
    let client = context.client
    let request = try client.request(.get, path)
    try sameServer(try client.url(path), path: path, client: client, command: "get")
    let reply = try await client.exchange(request)
    let body = reply.body.bytes
    try DeliveryProof.apiReply(reply.response, body: body, attempts: reply.attempts)
    if context.global.json {
      let object: [String: JSONValue] = [
        "status": .string("ok"), "http_status": .int(reply.response.status.code),
        "attempts": .int(reply.attempts), "body": JSONLine.body(body),
      ]
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      var text = String(decoding: body, as: UTF8.self)
      if !text.hasSuffix("\n") { text += "\n" }
      context.output.out(text)
    }
    return .success
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
