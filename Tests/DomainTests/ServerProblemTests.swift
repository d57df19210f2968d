import CourierDomain
import Foundation
import Testing

@Suite("ServerProblem")
struct ServerProblemTests {
  @Test(
    "never crashes on junk bodies",
    arguments: ["", "null", "[]", "\"text\"", "{", "<html>", "{\"code\":5}", "{\"message\":[1]}"])
  func junk(_ body: String) {
    let problem = ServerProblem.decode(Data(body.utf8), contentType: "application/json")
    #expect(problem.message == nil)
  }

  @Test("long messages are bounded and control characters shown as escapes")
  func bounded() throws {
    let long = String(repeating: "a", count: 1000)
    let problem = ServerProblem.decode(
      Data(#"{"code":"c","message":"\#(long)"}"#.utf8), contentType: nil)
    #expect(try #require(problem.message).count == 300)
    let controlled = ServerProblem.decode(
      Data(#"{"code":"c","message":"a\u001b[31mb"}"#.utf8), contentType: nil)
    #expect(controlled.message == #"a\e[31mb"#)
    // The bidi override and an OSC title ended by BEL: visible, as every command prints them.
    let hostile = ServerProblem.decode(
      Data(#"{"code":"c","message":"x\u202Egnp.exe \u001b]0;owned\u0007y"}"#.utf8),
      contentType: nil)
    #expect(hostile.message == #"x\u{202E}gnp.exe \e]0;owned\x07y"#)
    // Cut before escaping: the bound never splits an escape.
    let longControlled = ServerProblem.decode(
      Data(#"{"message":"\#(long)\u001b"}"#.utf8), contentType: nil)
    #expect(try #require(longControlled.message).hasSuffix("a…"))
  }
}
