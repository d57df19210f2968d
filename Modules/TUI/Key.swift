/// A key as a person pressed it.
package enum Key: Sendable, Hashable {
  /// Printable text: one Unicode scalar (a combining mark arrives on its own).
  case character(Character)
  /// Return or Enter.
  case enter
  /// Tab.
  case tab
  /// Shift-Tab.
  case backTab
  /// Backspace (DEL or BS).
  case backspace
  /// Delete (forward).
  case delete
  /// Insert.
  case insert
  /// Escape on its own.
  case escape
  /// Cursor up.
  case up
  /// Cursor down.
  case down
  /// Cursor left.
  case left
  /// Cursor right.
  case right
  /// Home.
  case home
  /// End.
  case end
  /// Page Up.
  case pageUp
  /// Page Down.
  case pageDown
  /// F1…F12.
  case function(Int)
  /// Control and a letter, as the lower-case letter: Ctrl-C is `.control("c")`.
  case control(Character)
  /// Alt (Meta) and a printable character, sent as Escape then the character.
  case alt(Character)
}
