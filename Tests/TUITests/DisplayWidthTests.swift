import Testing

@testable import CourierTUI

@Suite("DisplayWidth")
struct DisplayWidthTests {
  @Test(
    "the width of a string counts columns, not bytes or characters",
    arguments: [
      ("abc", 3),
      ("", 0),
      ("日本語", 6),
      ("한국어", 6),
      ("ｆｕｌｌ", 8),  // full-width Latin
      ("😀", 2),
      ("e\u{301}", 1),  // e + combining acute: one column
      ("👍🏽", 4),  // emoji + skin tone modifier: both wide, as wcwidth counts them
      ("🇫🇷", 2),  // two regional indicators
      ("a\u{200B}b", 2),  // zero width space
      ("Ω≈", 2),
    ])
  func width(text: String, expected: Int) {
    #expect(DisplayWidth.of(text) == expected)
  }

  @Test(
    "truncation cuts by display width at a cluster boundary and adds an ellipsis",
    arguments: [
      ("hello world", 8, "hello w…"),
      ("hello", 5, "hello"),
      ("hello", 4, "hel…"),
      ("日本語のタイトル", 7, "日本語…"),  // 6 + 1: a wide char never straddles the edge
      ("日本語のタイトル", 8, "日本語…"),  // 8 would need a half character: stop at 7
      ("🎉🎉🎉🎉", 5, "🎉🎉…"),
      ("e\u{301}e\u{301}e\u{301}", 2, "e\u{301}…"),
      ("abc", 0, ""),
    ])
  func truncate(text: String, width: Int, expected: String) {
    let cut = DisplayWidth.truncate(text, to: width)
    #expect(cut == expected)
    #expect(DisplayWidth.of(cut) <= width)
  }

  @Test("fit pads to exactly the width, even when a wide character does not fit")
  func fitPads() {
    for width in 1...12 {
      for text in ["日本語のタイトル", "ab🎉cd", "plain text here", ""] {
        #expect(DisplayWidth.of(DisplayWidth.fit(text, to: width)) == width, "\(text) \(width)")
      }
    }
  }

  @Test("control characters and bidi overrides reach the terminal only as visible escapes")
  func escapedOnScreen() {
    // Every segment of a line goes through the one function the CLI prints with (LogText),
    // the bidi override included.
    let line = StyledLine("a\u{1B}[2Jb\nc\td\u{7F}e\u{202E}f", .plain)
    #expect(line.render(width: 40, colour: false).hasPrefix(#"a\e[2Jb\nc\td\x7Fe\u{202E}f "#))
    #expect(StyledLine("plain", .plain).render(width: 5, colour: false) == "plain")
    #expect(DisplayWidth.wrap("one\ntwo\u{1B}]0;x\u{07}", to: 20) == ["one", #"two\e]0;x\x07"#])
  }

  @Test("wrapping breaks at spaces, keeps newlines, splits long words by width")
  func wrap() {
    #expect(DisplayWidth.wrap("one two three four", to: 9) == ["one two", "three", "four"])
    #expect(DisplayWidth.wrap("a\nb", to: 9) == ["a", "b"])
    #expect(DisplayWidth.wrap("日本語日本語", to: 5) == ["日本", "語日", "本語"])
    #expect(DisplayWidth.wrap("", to: 5) == [""])
  }
}
