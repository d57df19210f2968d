import CourierDomain

/// A drawn screen: one string per terminal row, each exactly as wide as the terminal, and where
/// the cursor goes (only when text is being typed).
package struct RenderedScreen: Sendable, Hashable {
  /// A cursor position, zero-based.
  package struct Cursor: Sendable, Hashable {
    /// The row.
    package var row: Int
    /// The column.
    package var column: Int

    /// Creates a position.
    /// - Parameters:
    ///   - row: the row.
    ///   - column: the column.
    package init(row: Int, column: Int) {
      self.row = row
      self.column = column
    }
  }

  /// The rows, with SGR escape sequences only when colour is on.
  package var lines: [String]
  /// The cursor, or nil to hide it.
  package var cursor: Cursor?

  /// Creates a screen.
  /// - Parameters:
  ///   - lines: the rows.
  ///   - cursor: the cursor.
  package init(lines: [String], cursor: Cursor? = nil) {
    self.lines = lines
    self.cursor = cursor
  }
}
