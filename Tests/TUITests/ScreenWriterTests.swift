import Testing

@testable import CourierTUI

@Suite("ScreenWriter")
struct ScreenWriterTests {
  static let size = TerminalSize(rows: 3, columns: 5)

  @Test("the first frame clears and draws every row; an identical frame writes nothing")
  func firstFrame() {
    var writer = ScreenWriter()
    let screen = RenderedScreen(lines: ["aaaaa", "bbbbb", "ccccc"])
    let first = writer.frame(for: screen, size: Self.size)
    #expect(first.contains("\u{1B}[2J"))
    for (row, line) in screen.lines.enumerated() {
      #expect(first.contains("\u{1B}[\(row + 1);1H\(line)"))
    }
    #expect(writer.frame(for: screen, size: Self.size) == "")
  }

  @Test("only the rows that changed are rewritten")
  func diff() {
    var writer = ScreenWriter()
    _ = writer.frame(for: RenderedScreen(lines: ["aaaaa", "bbbbb", "ccccc"]), size: Self.size)
    let next = writer.frame(
      for: RenderedScreen(lines: ["aaaaa", "BBBBB", "ccccc"]), size: Self.size)
    #expect(next.contains("\u{1B}[2;1HBBBBB"))
    #expect(!next.contains("aaaaa") && !next.contains("ccccc"))
    #expect(!next.contains("\u{1B}[2J"))
  }

  @Test("a new size or an invalidation redraws everything")
  func redraw() {
    var writer = ScreenWriter()
    let screen = RenderedScreen(lines: ["aaaaa", "bbbbb", "ccccc"])
    _ = writer.frame(for: screen, size: Self.size)
    writer.invalidate()
    #expect(writer.frame(for: screen, size: Self.size).contains("\u{1B}[2J"))
    let bigger = TerminalSize(rows: 3, columns: 6)
    #expect(writer.frame(for: screen, size: bigger).contains("\u{1B}[2J"))
  }

  @Test("the cursor is shown where the screen puts it, hidden otherwise")
  func cursor() {
    var writer = ScreenWriter()
    let typing = RenderedScreen(
      lines: ["aaaaa", "bbbbb", "ccccc"], cursor: RenderedScreen.Cursor(row: 1, column: 2))
    #expect(writer.frame(for: typing, size: Self.size).hasSuffix("\u{1B}[2;3H\u{1B}[?25h"))
    let moved = RenderedScreen(
      lines: typing.lines, cursor: RenderedScreen.Cursor(row: 1, column: 3))
    #expect(writer.frame(for: moved, size: Self.size).hasSuffix("\u{1B}[2;4H\u{1B}[?25h"))
    let hidden = RenderedScreen(lines: typing.lines)
    #expect(writer.frame(for: hidden, size: Self.size).hasSuffix("\u{1B}[?25l"))
  }
}
