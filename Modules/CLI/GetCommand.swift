import CourierCore
import CourierDomain
import Foundation

/// `courier get PATH`.
enum GetCommand {
  static func run(path: String, context: CommandContext) async throws -> ExitCode {
    let client = context.client
    let request = try client.request(.get, path)
    let response = try await client.send(request)
    try DeliveryProof.apiReply(response)
    if context.global.json {
      var object: [String: Any] = [
        "status": "ok", "http_status": response.status, "attempts": response.attempts,
      ]
      if let json = try? JSONSerialization.jsonObject(
        with: response.body, options: [.fragmentsAllowed])
      {
        object["body"] = json
      } else {
        object["body"] = String(decoding: response.body, as: UTF8.self)
      }
      context.output.out(JSONLine.encode(object) + "\n")
    } else {
      var text = String(decoding: response.body, as: UTF8.self)
      if !text.hasSuffix("\n") { text += "\n" }
      context.output.out(text)
    }
    return .success
  }
}
