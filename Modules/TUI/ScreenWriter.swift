/// Turns successive screens into the bytes that bring the terminal from one to the next,
/// rewriting only the rows that changed. Pure: it returns text, the caller writes it.
///
/// Every row is as wide as the terminal (the renderer pads), so a row is replaced by writing it
/// whole from column 1 and no "erase to end of line" is needed (which would erase the last
/// column when the cursor waits there to wrap). Autowrap is off while the interface runs.
package struct ScreenWriter: Sendable {
  private var previous: [String] = []
  private var previousSize: TerminalSize?
  private var previousCursor: RenderedScreen.Cursor?

  /// Creates a writer that will draw everything the first time.
  package init() {}

  /// Forgets what is on the terminal, so the next frame is drawn whole (after a resize, a
  /// suspend, or anything that may have scribbled on the screen).
  package mutating func invalidate() {
    previous = []
    previousSize = nil
  }

  /// The bytes to write to show `screen`.
  /// - Parameters:
  ///   - screen: the screen to show.
  ///   - size: the terminal's size it was rendered for.
  /// - Returns: escape sequences and text; empty when nothing changed.
  package mutating func frame(for screen: RenderedScreen, size: TerminalSize) -> String {
    var out = ""
    let full = previousSize != size || previous.count != screen.lines.count
    if full { out += "\u{1B}[0m\u{1B}[H\u{1B}[2J" }
    for (row, line) in screen.lines.enumerated() where full || previous[row] != line {
      out += "\u{1B}[\(row + 1);1H" + line + "\u{1B}[0m"
    }
    if out.isEmpty, screen.cursor == previousCursor { return "" }
    if let cursor = screen.cursor {
      out += "\u{1B}[\(cursor.row + 1);\(cursor.column + 1)H\u{1B}[?25h"
    } else {
      out += "\u{1B}[?25l"
    }
    // Hide the cursor while rows are rewritten, so it does not flicker across the screen.
    if !out.hasPrefix("\u{1B}[?25l") { out = "\u{1B}[?25l" + out }
    previous = screen.lines
    previousSize = size
    previousCursor = screen.cursor
    return out
  }
}
