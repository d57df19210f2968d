import CourierDomain
import Foundation
import Testing

/// `SecretRedaction` (decision 2421): a secret a server repeats is taken out of what
/// Courier shows or stores, however the server wrote it.
@Suite("SecretRedaction")
struct SecretRedactionTests {
  let redaction = SecretRedaction(["tok/en+1", "refresh-9", nil, ""])
  let mark = SecretRedaction.mark

  @Test("every occurrence of every secret, nil and empty ones ignored")
  func text() {
    #expect(redaction.secrets == ["refresh-9", "tok/en+1"])
    #expect(
      redaction.text("Authorization: Bearer tok/en+1, again tok/en+1; refresh-9")
        == "Authorization: Bearer \(mark), again \(mark); \(mark)")
    #expect(redaction.text("nothing here") == "nothing here")
    #expect(SecretRedaction([nil, ""]).isEmpty)
  }

  @Test("a JSON body: found in its decoded strings (a `\\/` escape too) and in member names")
  func jsonBody() throws {
    let body = Data(
      #"{"message":"You sent Bearer tok\/en+1","tok\/en+1":1,"n":[1,"refresh-9"]}"#.utf8)
    let redacted = try JSONValue(parsing: redaction.body(body))
    #expect(redacted["message"] == .string("You sent Bearer \(mark)"))
    #expect(redacted[mark] == .integer(1))
    #expect(redacted["n"] == .array([.integer(1), .string(mark)]))
    // A body without a secret is returned byte for byte.
    let clean = Data(#"{ "message" : "fine" }"#.utf8)
    #expect(redaction.body(clean) == clean)
  }

  @Test("a body nested as deep as the parser reads is redacted without recursion, exactly")
  func deepBody() throws {
    let levels = JSONValue.maximumDepth - 1
    func nested(_ inner: String) -> String {
      String(repeating: #"{"a":["#, count: levels / 2) + inner
        + String(repeating: "]}", count: levels / 2)
    }
    let body = Data(
      #"{"current":\#(nested(#"{"tok/en+1":"Bearer tok/en+1","n":18446744073709551617}"#))}"#
        .utf8)
    let redacted = redaction.body(body)
    let expected =
      #"{"current":\#(nested(#"{"\#(mark)":"Bearer \#(mark)","n":18446744073709551617}"#))}"#
    let same = String(decoding: redacted, as: UTF8.self) == expected
    #expect(same)
  }

  @Test("a secret repeated as a JSON request body spells it is found too")
  func spelledAsJSON() {
    let password = SecretRedaction([#"pa"ss\/x"#])
    // The request body as JSONEncoder wrote it, repeated raw inside a text.
    let echoed = #"You sent {"password":"pa\"ss\\\/x"} and {"password":"pa\"ss\\/x"}"#
    #expect(
      password.text(echoed)
        == #"You sent {"password":"\#(mark)"} and {"password":"\#(mark)"}"#)
  }

  @Test("a body that is not JSON is redacted as text")
  func textBody() {
    let body = Data("<html>token=tok/en+1</html>".utf8)
    #expect(String(decoding: redaction.body(body), as: UTF8.self) == "<html>token=\(mark)</html>")
  }

  @Test("an error: message, code, field, current record, underlying and context")
  func error() {
    let error = CourierError(
      .business, status: 400, code: "tok/en+1", serverMessage: "sent tok/en+1",
      field: "refresh-9", current: .object(["title": .string("tok/en+1")]),
      underlying: "body tok/en+1", context: "PUT /a/tok/en+1")
    let redacted = redaction.error(error)
    #expect(redacted.serverMessage == "sent \(mark)")
    #expect(redacted.code == mark)
    #expect(redacted.field == mark)
    #expect(redacted.current == .object(["title": .string(mark)]))
    #expect(redacted.underlying == "body \(mark)")
    #expect(redacted.context == "PUT /a/\(mark)")
    #expect(redacted.status == 400 && redacted.kind == .business)
  }
}
