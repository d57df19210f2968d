import CourierDomain
import Foundation
import Testing

/// The domain's own replacements of Foundation text routines: a server message's markup test,
/// a record id as one path segment.
@Suite("Domain text rules that replace NSRegularExpression and urlPathAllowed")
struct DomainTextRulesTests {
  static let markup = [
    "", "<", "<>", "<a>", "<a", "a<b>c", "< a>", "<1>", "</p>", "<!-- x -->", "<!x", "x < y > z",
    "x <y", "<<a>", "<a<b>", "<é>", "<ab\ncd>", "2 < 3 and 4 > 1", "<-a>", "<z >", "text",
  ]

  @Test("containsTag matches the pattern <[a-z/!][^>]*>", arguments: markup)
  func tagShape(_ text: String) {
    let regex = text.range(of: #"<[a-z/!][^>]*>"#, options: .regularExpression) != nil
    #expect(ServerProblem.containsTag(text) == regex)
  }

  static let ids = [
    "a1", "a b?c", "é", "100%", "a+b", "x&y=z", "(1)", "a:b@c", "~u", "a#b", "a\"b", "a\\b", "[x]",
    "{y}", "|", "^", "`", "日本", "a\u{0}b", "a;b", "'q'", "*", "$",
  ]

  @Test("an id without / or dot segments encodes as urlPathAllowed did", arguments: ids)
  func pathSegmentMatchesFoundation(_ id: String) {
    #expect(
      ReplayRequest.pathSegment(id)
        == id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed))
  }

  @Test("a / or a dot segment can never name another path")
  func pathSegmentStaysOneSegment() {
    #expect(ReplayRequest.pathSegment("a/b") == "a%2Fb")
    #expect(ReplayRequest.pathSegment("../auth/token") == "..%2Fauth%2Ftoken")
    #expect(ReplayRequest.pathSegment(".") == "%2E")
    #expect(ReplayRequest.pathSegment("..") == "%2E%2E")
    #expect(ReplayRequest.pathSegment("...") == "...")
    #expect(ReplayRequest.pathSegment("a.b") == "a.b")
  }
}
