import CourierDomain
import CourierPorts
import CourierSystem
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A transport decorator that logs each exchange to the call's logger (`TransportOptions.logger`,
/// decision 2203): the request about to be sent at `trace` (method, URL, header fields), its
/// answer at `debug` (status, path, time) or its failure at `debug`, each with the call's
/// metadata (`courier.request.id`, drawn here for a call that came through no retry step, and
/// `courier.attempt`) and `courier.http.status` or `courier.error.kind`.
///
/// Headers are logged redacted (never an `Authorization`, cookie or other credential-bearing
/// value); URLs without their `user:password@` and without credential-bearing query values;
/// bodies never. Every line is one line: control characters, whoever supplied them (a server's
/// error text, a URL), are escaped (`LogText`). A logger that logs neither level costs a
/// comparison.
package struct LoggingTransport: Transport {
  private let base: any Transport

  /// The wrapped transport's (see `Transport.taskExecutor`).
  package var taskExecutor: (any TaskExecutor)? { base.taskExecutor }

  /// Wraps a transport.
  /// - Parameter base: the transport.
  package init(_ base: any Transport) {
    self.base = base
  }

  /// The line logged for a request about to be sent.
  /// - Parameter request: the request.
  /// - Returns: the line, headers redacted.
  package static func line(for request: HTTPRequest) -> String {
    let headers = redacted(request.headerFields).map { "\($0.name): \($0.value)" }
      .joined(separator: "; ")
    let url = request.url.map(redacted) ?? "<unprintable URL>"
    return LogText.escaped(
      "→ \(request.method) \(url)" + (headers.isEmpty ? "" : " [\(headers)]"))
  }

  /// Header names whose values are credentials, lower-cased; names containing one of
  /// `secretNameParts` are treated the same.
  static let secretHeaders: Set<String> = [
    "authorization", "proxy-authorization", "cookie", "set-cookie", "set-cookie2",
  ]
  /// Parts of a header or query parameter name that mark its value as a credential.
  static let secretNameParts = [
    "token", "secret", "password", "passwd", "api-key", "apikey", "api_key", "session",
    "signature", "credential", "auth",
  ]

  static func isSecret(_ name: String) -> Bool {
    let lower = name.lowercased()
    return secretHeaders.contains(lower) || secretNameParts.contains { lower.contains($0) }
  }

  /// Header fields fit for a log: credential-bearing values replaced by `<redacted>`.
  /// - Parameter fields: the fields.
  /// - Returns: the redacted copy, in the same order.
  package static func redacted(_ fields: HTTPFields) -> HTTPFields {
    HTTPFields(
      fields.map {
        isSecret($0.name.canonicalName) ? HTTPField(name: $0.name, value: "<redacted>") : $0
      })
  }

  /// A URL fit for a log: `user:password@` replaced by `<redacted>@`, credential-bearing query
  /// values by `REDACTED`.
  /// - Parameter url: the URL.
  /// - Returns: its text, redacted.
  package static func redacted(_ url: URL) -> String {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
      return "<unprintable URL>"
    }
    let hadUserInfo = components.user != nil || components.password != nil
    components.user = nil
    components.password = nil
    if let items = components.percentEncodedQueryItems {
      components.percentEncodedQueryItems = items.map {
        isSecret($0.name) && $0.value != nil ? URLQueryItem(name: $0.name, value: "REDACTED") : $0
      }
    }
    guard var text = components.string else { return "<unprintable URL>" }
    if hadUserInfo, let separator = text.firstRange(of: "://") {
      text.insert(contentsOf: "<redacted>@", at: separator.upperBound)
    }
    return text
  }

  /// Sends and logs to `options.logger`.
  /// - Parameters:
  ///   - request: the request.
  ///   - body: the body, never logged.
  ///   - options: per-call options, the logger among them.
  /// - Returns: the response and its body.
  /// - Throws: what the wrapped transport throws.
  package func send(
    _ request: HTTPRequest, body: RequestBody?, options: TransportOptions
  ) async throws -> (HTTPResponse, ResponseBody) {
    guard options.logger.logs(.debug) else {
      return try await base.send(request, body: body, options: options)
    }
    let call = options.identifyingCall()
    let logger = call.logger
    logger.trace("\(Self.line(for: request))")
    let start = ContinuousClock.now
    do {
      let answer = try await base.send(request, body: body, options: call)
      logger.debug(
        "\(LogText.escaped("← \(answer.0.status.code) \(request.summary) in \(Self.ms(start.duration(to: .now)))"))",
        metadata: [CourierLogKey.status: "\(answer.0.status.code)"])
      return answer
    } catch {
      let kind = CourierError.wrapping(error).kind
      logger.debug(
        "\(LogText.escaped("✗ \(request.summary) in \(Self.ms(start.duration(to: .now))): \(error)"))",
        metadata: [CourierLogKey.errorKind: "\(kind.rawValue)"])
      throw error
    }
  }

  private static func ms(_ duration: Duration) -> String {
    (duration.seconds * 1000).fixed(digits: 0) + " ms"
  }
}
