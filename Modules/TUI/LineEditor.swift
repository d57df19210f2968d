import CourierSystem

/// A one-line text editor as a value: the text and a cursor counted in grapheme clusters, so
/// that an accented letter, a CJK character or an emoji moves and deletes as one.
package struct LineEditor: Sendable, Hashable {
  /// The text.
  package private(set) var text: String
  /// The cursor, in characters from the start (0...text.count).
  package private(set) var cursor: Int

  /// Creates an editor with the cursor at the end.
  /// - Parameter text: the initial text.
  package init(text: String = "") {
    self.text = Self.oneLine(text)
    self.cursor = self.text.count
  }

  /// Creates an editor with the cursor where given (clamped to the text).
  /// - Parameters:
  ///   - text: the initial text.
  ///   - cursor: the cursor position in characters.
  package init(text: String, cursor: Int) {
    self.init(text: text)
    self.cursor = min(max(0, cursor), self.text.count)
  }

  /// Applies one key.
  /// - Parameter key: the key.
  /// - Returns: whether the editor used the key (false for Enter, Escape, Tab, arrows up/down…).
  @discardableResult
  package mutating func handle(_ key: Key) -> Bool {
    switch key {
    case .character(let character): insert(String(character))
    case .left, .control("b"): cursor = max(0, cursor - 1)
    case .right, .control("f"): cursor = min(text.count, cursor + 1)
    case .home, .control("a"): cursor = 0
    case .end, .control("e"): cursor = text.count
    case .backspace, .control("h"): deleteBackward()
    case .delete, .control("d"): deleteForward()
    case .control("k"): text = String(text.prefix(cursor))
    case .control("u"):
      text = String(text.dropFirst(cursor))
      cursor = 0
    case .control("w"): deleteWordBackward()
    default: return false
    }
    return true
  }

  /// Inserts text at the cursor and moves the cursor after it. A combining mark typed after a
  /// letter joins it, as in the terminal.
  /// - Parameter typed: the text typed (control characters become spaces).
  package mutating func insert(_ typed: String) {
    let clean = Self.oneLine(typed)
    let index = text.index(text.startIndex, offsetBy: cursor)
    let head = String(text[..<index]) + clean
    text = head + text[index...]
    // Counting the new head, not adding clean.count: a combining mark may merge with the
    // character before it.
    cursor = min(head.count, text.count)
  }

  /// Text typed or pasted into the one-line field: what a terminal would act on (a line break,
  /// an escape, a bidi override) becomes a space. That is input, not printing: shown as an
  /// escape, `\n` would be sent to the server as two characters.
  static func oneLine(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: LogText.needsEscape) else { return text }
    return String(
      String.UnicodeScalarView(text.unicodeScalars.map { LogText.needsEscape($0) ? " " : $0 }))
  }

  /// Deletes the character before the cursor (Backspace).
  package mutating func deleteBackward() {
    guard cursor > 0 else { return }
    let index = text.index(text.startIndex, offsetBy: cursor - 1)
    text.remove(at: index)
    cursor -= 1
  }

  /// Deletes the character under the cursor (Delete).
  package mutating func deleteForward() {
    guard cursor < text.count else { return }
    let index = text.index(text.startIndex, offsetBy: cursor)
    text.remove(at: index)
  }

  private mutating func deleteWordBackward() {
    var characters = Array(text)
    var start = cursor
    while start > 0, characters[start - 1] == " " { start -= 1 }
    while start > 0, characters[start - 1] != " " { start -= 1 }
    characters.removeSubrange(start..<cursor)
    text = String(characters)
    cursor = start
  }

  /// The part of the text to show in a field `width` columns wide, scrolled so that the cursor
  /// stays visible, and the cursor's column in it.
  /// - Parameter width: the field's width in columns (at least 2).
  /// - Returns: the visible text (at most `width` columns) and the cursor column.
  package func window(width: Int) -> (text: String, cursorColumn: Int) {
    let width = max(2, width)
    let characters = Array(text)
    var start = 0
    // Keep one column for the cursor after the last character.
    while DisplayWidth.of(String(characters[start..<cursor])) > width - 1 { start += 1 }
    let column = DisplayWidth.of(String(characters[start..<cursor]))
    var shown = ""
    var used = 0
    for character in characters[start...] {
      let w = DisplayWidth.of(character)
      if used + w > width { break }
      shown.append(character)
      used += w
    }
    return (shown, column)
  }
}
