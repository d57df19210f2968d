import Testing

@testable import CourierTUI

@Suite("LineEditor")
struct LineEditorTests {
  static func type(_ keys: [Key], into editor: LineEditor = LineEditor()) -> LineEditor {
    var editor = editor
    for key in keys { editor.handle(key) }
    return editor
  }

  static func characters(_ text: String) -> [Key] { text.map { .character($0) } }

  @Test("typing inserts at the cursor; arrows, Home and End move it")
  func cursorMoves() {
    let editor = Self.type(
      Self.characters("helo") + [.left, .character("l")] + [.home, .character("»")]
        + [.end, .character("!")])
    #expect(editor.text == "»hello!")
    #expect(editor.cursor == 7)
  }

  @Test("Backspace deletes before the cursor, Delete under it, both stop at the edges")
  func deleting() {
    var editor = LineEditor(text: "abc", cursor: 1)
    editor.handle(.backspace)
    #expect(editor.text == "bc" && editor.cursor == 0)
    editor.handle(.backspace)
    #expect(editor.text == "bc" && editor.cursor == 0)
    editor.handle(.delete)
    #expect(editor.text == "c" && editor.cursor == 0)
    editor.handle(.end)
    editor.handle(.delete)
    #expect(editor.text == "c" && editor.cursor == 1)
  }

  @Test("wide characters and emoji move and delete as one")
  func utf8() {
    var editor = Self.type(Self.characters("日本🎉é"))
    #expect(editor.cursor == 4)
    editor.handle(.left)
    editor.handle(.backspace)
    #expect(editor.text == "日本é")
    editor.handle(.home)
    editor.handle(.delete)
    #expect(editor.text == "本é")
  }

  @Test("a combining mark typed after a letter joins it")
  func combining() {
    let editor = Self.type([.character("e"), .character("\u{301}"), .character("x")])
    #expect(editor.text == "\u{E9}x")
    #expect(editor.cursor == 2)
  }

  @Test("Ctrl-A/E/K/U/W edit like a shell")
  func emacsKeys() {
    var editor = LineEditor(text: "one two three", cursor: 7)
    editor.handle(.control("k"))
    #expect(editor.text == "one two")
    editor.handle(.control("w"))
    #expect(editor.text == "one " && editor.cursor == 4)
    editor.handle(.control("a"))
    #expect(editor.cursor == 0)
    editor.handle(.control("e"))
    editor.handle(.control("u"))
    #expect(editor.text == "" && editor.cursor == 0)
  }

  @Test("keys that are not editing are left to the caller")
  func unhandled() {
    var editor = LineEditor(text: "x")
    for key in [Key.enter, .escape, .tab, .up, .down, .control("c")] {
      let used = editor.handle(key)
      #expect(!used)
    }
    #expect(editor.text == "x")
  }

  @Test("a long text scrolls so that the cursor stays in the field")
  func window() {
    let editor = LineEditor(text: String(repeating: "日", count: 20))
    let end = editor.window(width: 10)
    #expect(DisplayWidth.of(end.text) <= 10)
    #expect(end.cursorColumn <= 9)
    let start = LineEditor(text: editor.text, cursor: 0).window(width: 10)
    #expect(start.cursorColumn == 0)
    #expect(start.text == String(repeating: "日", count: 5))
  }

  @Test("pasted control characters become spaces")
  func pasted() {
    var editor = LineEditor()
    editor.insert("a\u{1B}b\nc")
    #expect(editor.text == "a b c")
  }
}
