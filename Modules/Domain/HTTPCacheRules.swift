import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The RFC 9111 rules a private client cache needs, pure (table-tested in `HTTPCacheRulesTests`):
/// what may be stored, how old a stored reply is, whether it is still fresh, and whether it
/// answers a request whose header fields its `Vary` names (decision 2511).
package enum HTTPCacheRules {
  /// The statuses stored: 200 and 203, the successes a GET's caller reads a body from. Other
  /// heuristically cacheable statuses (404, 301, …) are not stored: the client turns them into
  /// errors, and a remembered error offline would hide the real one.
  package static let storableStatuses: Set<Int> = [200, 203]

  /// The directives of the `Cache-Control` fields this cache acts on.
  package struct Directives: Sendable, Equatable {
    /// `no-store`: the reply (or the request's) is never stored.
    package var noStore = false
    /// `no-cache`: a stored reply must be revalidated before it is used.
    package var noCache = false
    /// `max-age=N`, seconds.
    package var maxAge: Int?
    /// `public`: the server says any cache may keep it for anyone (decision 2505).
    package var isPublic = false
    /// `private`: the reply is for the user who asked only.
    package var isPrivate = false

    /// Reads every `Cache-Control` line of `fields`; directive names are case-insensitive,
    /// unknown ones (`must-revalidate`, …) change nothing here.
    /// - Parameter fields: the header fields.
    package init(_ fields: HTTPFields) {
      for line in fields[values: .cacheControl] {
        for part in line.split(separator: ",") {
          let pair = part.split(separator: "=", maxSplits: 1)
          guard let rawName = pair.first else { continue }
          let name = rawName.trimmingBlanks().lowercased()
          switch name {
          case "no-store": noStore = true
          case "no-cache": noCache = true
          case "public": isPublic = true
          case "private": isPrivate = true
          case "max-age":
            guard pair.count == 2 else { continue }
            var value = pair[1].trimmingBlanks()
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
              value = String(value.dropFirst().dropLast())
            }
            // A value beyond `Int` is "a very long time" (RFC 9111 §1.2.2).
            if let seconds = Int(value), seconds >= 0 {
              maxAge = min(maxAge ?? .max, seconds)
            } else if !value.isEmpty, value.allSatisfy(\.isASCIIDigit) {
              maxAge = maxAge ?? Int(Int32.max)
            } else {
              // An invalid max-age makes the reply stale (RFC 9111 §4.2.1).
              maxAge = 0
            }
          default: continue
          }
        }
      }
    }
  }

  /// Whether a reply to `request` may be stored.
  /// - Parameters:
  ///   - request: the request that was sent.
  ///   - hasBody: whether the request carried a body.
  ///   - response: the reply.
  /// - Returns: true for a GET without a body answered 200 or 203, without `no-store` on
  ///   either side and without `Vary: *`.
  package static func isStorable(
    request: HTTPRequest, hasBody: Bool, response: HTTPResponse
  ) -> Bool {
    guard request.method == .get, !hasBody else { return false }
    guard storableStatuses.contains(response.status.code) else { return false }
    if Directives(request.headerFields).noStore || Directives(response.headerFields).noStore {
      return false
    }
    return varyNames(response.headerFields) != nil
  }

  /// Whether a stored reply outlives a change of identity (a login or a logout, decision 2505):
  /// only when the server marked it `public` (any cache may keep it for anyone, RFC 9111
  /// §5.2.2.9), and not `private` or `no-store` as well.
  /// - Parameter fields: the stored reply's header fields.
  /// - Returns: true when the reply is no one's private data.
  package static func outlivesIdentity(_ fields: HTTPFields) -> Bool {
    let directives = Directives(fields)
    return directives.isPublic && !directives.isPrivate && !directives.noStore
  }

  /// The request header fields a reply varies on, lowercased, sorted and without repeats; nil
  /// for `Vary: *`, which no later request matches.
  /// - Parameter fields: the reply's header fields.
  /// - Returns: the names, or nil.
  package static func varyNames(_ fields: HTTPFields) -> [String]? {
    var names: Set<String> = []
    for line in fields[values: .vary] {
      for part in line.split(separator: ",") {
        let name = part.trimmingBlanks().lowercased()
        if name == "*" { return nil }
        if !name.isEmpty { names.insert(name) }
      }
    }
    return names.sorted()
  }

  /// The values a request gives the fields a reply varies on: each name with the request's
  /// values joined by ", " (an absent field is the empty string, which only an absent field
  /// matches).
  /// - Parameters:
  ///   - names: the names, from ``varyNames(_:)``.
  ///   - request: the request's header fields.
  /// - Returns: name → value.
  package static func varyValues(_ names: [String], of request: HTTPFields) -> [String: String] {
    var values: [String: String] = [:]
    for name in names {
      guard let field = HTTPField.Name(name) else {
        values[name] = ""
        continue
      }
      values[name] = request[values: field].joined(separator: ", ")
    }
    return values
  }

  /// Whether a stored reply, stored with `stored` as its request's values of the fields it
  /// varies on, answers a request with `request` header fields.
  /// - Parameters:
  ///   - stored: the stored request's values (``varyValues(_:of:)``).
  ///   - request: the new request's header fields.
  /// - Returns: true when every named field has the same value (blanks around commas aside).
  package static func varyMatches(_ stored: [String: String], request: HTTPFields) -> Bool {
    let now = varyValues(Array(stored.keys), of: request)
    return stored.allSatisfy { name, value in normalized(value) == normalized(now[name] ?? "") }
  }

  /// How long a reply stays fresh, in seconds: `max-age`, else `Expires` minus `Date` (an
  /// invalid `Expires` is already stale), else 0: no heuristic freshness, so a reply without
  /// explicit freshness is revalidated each time it is used online.
  /// - Parameter fields: the reply's header fields.
  /// - Returns: seconds, at least 0.
  package static func freshnessLifetime(_ fields: HTTPFields) -> Double {
    if let maxAge = Directives(fields).maxAge { return Double(maxAge) }
    guard let expires = fields[.expires] else { return 0 }
    guard let expiry = RetryAfter.httpDate(expires) else { return 0 }
    let date = fields[.date].flatMap(RetryAfter.httpDate) ?? expiry
    return max(0, expiry.timeIntervalSince(date))
  }

  /// A stored reply's current age in seconds (RFC 9111 §4.2.3): the larger of the age it had
  /// when received (`Age`, or the time since its `Date`) plus the time it has been stored.
  /// - Parameters:
  ///   - fields: the reply's header fields.
  ///   - storedAt: when it was received (or last revalidated).
  ///   - now: the time now.
  /// - Returns: seconds, at least 0.
  package static func currentAge(_ fields: HTTPFields, storedAt: Date, now: Date) -> Double {
    let ageValue = fields[.age].flatMap { Double($0.trimmingBlanks()) } ?? 0
    let date = fields[.date].flatMap(RetryAfter.httpDate)
    let apparent = date.map { max(0, storedAt.timeIntervalSince($0)) } ?? 0
    let resident = max(0, now.timeIntervalSince(storedAt))
    return max(apparent, max(0, ageValue)) + resident
  }

  /// Whether a stored reply may answer a request without asking the server.
  /// - Parameters:
  ///   - fields: the stored reply's header fields.
  ///   - storedAt: when it was received (or last revalidated).
  ///   - request: the new request's header fields (`no-cache` or `max-age=0` there forces a
  ///     revalidation).
  ///   - now: the time now.
  /// - Returns: true when fresh and neither side says `no-cache`.
  package static func isFresh(
    _ fields: HTTPFields, storedAt: Date, request: HTTPFields, now: Date
  ) -> Bool {
    let asked = Directives(request)
    if asked.noCache || Directives(fields).noCache { return false }
    let age = currentAge(fields, storedAt: storedAt, now: now)
    if let limit = asked.maxAge, age >= Double(limit) { return false }
    return freshnessLifetime(fields) > age
  }

  /// The stored reply's fields updated by a 304's (RFC 9111 §3.2): each field the 304 names
  /// replaces the stored one, except the framing fields of the stored body.
  /// - Parameters:
  ///   - stored: the stored reply's header fields.
  ///   - notModified: the 304's header fields.
  /// - Returns: the fields to keep.
  package static func updated(_ stored: HTTPFields, with notModified: HTTPFields) -> HTTPFields {
    let kept: Set<HTTPField.Name> = [.contentLength, .contentEncoding, .transferEncoding]
    var fields = stored
    var replaced: Set<HTTPField.Name> = []
    for field in notModified where !kept.contains(field.name) {
      if replaced.insert(field.name).inserted { fields[values: field.name] = [] }
      fields.append(field)
    }
    return fields
  }

  private static func normalized(_ value: String) -> String {
    value.split(separator: ",").map { $0.trimmingBlanks() }.joined(separator: ",")
  }
}

extension StringProtocol {
  /// The text without spaces and tabs around it (HTTP's optional whitespace).
  fileprivate func trimmingBlanks() -> String {
    var slice = Substring(self)
    while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
    while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
    return String(slice)
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
