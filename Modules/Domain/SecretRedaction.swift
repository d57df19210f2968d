import HTTPTypes

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Takes the secrets a request carried (the bearer token, the refresh token, the password) out
/// of what a server answered, before anything of it is shown or stored (decision 2421): a server
/// that repeats a request's headers in its error message must not put the token on a screen, in
/// a `--json` error, in the outbox or in `courier.sqlite`.
///
/// Each occurrence of a secret becomes ``mark``. The step that put a secret in a request is the
/// one that knows it, so each applies this to the answers to its own requests: the auth step to
/// every reply that is not a success, the token renewal to its own reply, the login to its
/// failure. A success's body is data (a record) and passes exact.
package struct SecretRedaction: Sendable {
  /// What a secret is replaced with.
  package static let mark = "[redacted]"

  /// The secrets, longest first (so that a secret holding another is replaced whole).
  package let secrets: [String]
  /// What is looked for: each secret as it is, and as a JSON request body spells it (a server
  /// that repeats the body it was sent repeats `pa\"ss` or `a\/b`), longest first.
  private let spellings: [String]

  /// A redaction of the given secrets; nil and empty ones are left out.
  /// - Parameter secrets: the secrets.
  package init(_ secrets: [String?]) {
    func longestFirst(_ texts: some Sequence<String>) -> [String] {
      Array(Set(texts)).sorted {
        $0.utf8.count > $1.utf8.count || ($0.utf8.count == $1.utf8.count && $0 < $1)
      }
    }
    self.secrets = longestFirst(secrets.compactMap { $0 }.filter { !$0.isEmpty })
    self.spellings = longestFirst(
      self.secrets.flatMap { secret -> [String] in
        let quoted = JSONValue.string(secret).jsonText
        let inJSON = String(quoted.dropFirst().dropLast())
        return [secret, inJSON, inJSON.replacing("/", with: "\\/")]
      })
  }

  /// Whether there is nothing to take out.
  package var isEmpty: Bool { secrets.isEmpty }

  /// The text with every secret replaced.
  /// - Parameter text: the text.
  /// - Returns: the text, the same when it holds no secret.
  package func text(_ text: String) -> String {
    var result = text
    for spelling in spellings where result.contains(spelling) {
      result = result.replacing(spelling, with: Self.mark)
    }
    return result
  }

  /// Fields (a reply's header or trailer section) with every secret replaced in their values.
  /// - Parameter fields: the fields.
  /// - Returns: the fields, in order, the same when they hold no secret.
  package func fields(_ fields: HTTPFields) -> HTTPFields {
    guard !isEmpty else { return fields }
    return HTTPFields(fields.map { HTTPField(name: $0.name, value: text($0.value)) })
  }

  /// A JSON value with every secret replaced in its strings and member names. A loop with a
  /// stack of its own, not a recursion: a server's record may nest as deep as the parser reads
  /// (decision 2428).
  /// - Parameter value: the value.
  /// - Returns: the value, the same when it holds no secret.
  package func json(_ value: JSONValue) -> JSONValue {
    // The containers being rebuilt, outermost first: their items, the next one to redact, and
    // those redacted so far.
    struct Frame {
      var names: [String]?
      var items: [JSONValue]
      var next = 1
      var done: [JSONValue] = []
    }
    var open: [Frame] = []
    var current = value
    while true {
      var result: JSONValue
      switch current {
      case .string(let string): result = .string(text(string))
      case .array(let items) where !items.isEmpty:
        open.append(Frame(items: items))
        current = items[0]
        continue
      case .object(let members) where !members.isEmpty:
        let pairs = Array(members)
        open.append(Frame(names: pairs.map(\.key), items: pairs.map(\.value)))
        current = pairs[0].value
        continue
      default: result = current
      }
      // The value is redacted: it joins its container, and each finished container its own.
      while let last = open.indices.last {
        open[last].done.append(result)
        if open[last].next < open[last].items.count {
          current = open[last].items[open[last].next]
          open[last].next += 1
          break
        }
        let frame = open.removeLast()
        if let names = frame.names {
          var redacted: [String: JSONValue] = [:]
          for (name, member) in zip(names, frame.done) { redacted[text(name)] = member }
          result = .object(redacted)
        } else {
          result = .array(frame.done)
        }
      }
      if open.isEmpty { return result }
    }
  }

  /// A reply's body with every secret replaced: a JSON body in its decoded strings (a secret
  /// with a `/` the server wrote as `\/` is found too) and written again; any other body as
  /// UTF-8 text. A body that holds no secret is returned as it is, byte for byte.
  /// - Parameter bytes: the body.
  /// - Returns: the body.
  package func body(_ bytes: Data) -> Data {
    guard !isEmpty, !bytes.isEmpty else { return bytes }
    if let parsed = try? JSONValue(parsing: bytes) {
      let redacted = json(parsed)
      return redacted == parsed ? bytes : Data(redacted.jsonText.utf8)
    }
    let original = String(decoding: bytes, as: UTF8.self)
    let redacted = text(original)
    return redacted == original ? bytes : Data(redacted.utf8)
  }

  /// An error with every secret replaced in what it says: the server's message, code and field,
  /// its current record, and the underlying description and context kept for logs.
  /// - Parameter error: the error.
  /// - Returns: the error.
  package func error(_ error: CourierError) -> CourierError {
    guard !isEmpty else { return error }
    var redacted = error
    redacted.serverMessage = error.serverMessage.map(text)
    redacted.code = error.code.map(text)
    redacted.field = error.field.map(text)
    redacted.current = error.current.map(json)
    redacted.underlying = error.underlying.map(text)
    redacted.context = error.context.map(text)
    return redacted
  }
}
