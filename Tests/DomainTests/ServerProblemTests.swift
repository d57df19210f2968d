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

  @Test("long messages are bounded and control characters removed")
  func bounded() throws {
    let long = String(repeating: "a", count: 1000)
    let problem = ServerProblem.decode(
      Data(#"{"code":"c","message":"\#(long)"}"#.utf8), contentType: nil)
    #expect(try #require(problem.message).count == 300)
    let controlled = ServerProblem.decode(
      Data(#"{"code":"c","message":"a\u001b[31mb"}"#.utf8), contentType: nil)
    #expect(controlled.message == "a [31mb")
  }
}
