import CourierDomain

/// A drawn screen: one string per terminal row, each exactly as wide as the terminal, and where
/// the cursor goes (only when text is being typed).
public struct RenderedScreen: Sendable, Hashable {
  /// A cursor position, zero-based.
  public struct Cursor: Sendable, Hashable {
    /// The row.
    public var row: Int
    /// The column.
    public var column: Int

    /// Creates a position.
    /// - Parameters:
    ///   - row: the row.
    ///   - column: the column.
    public init(row: Int, column: Int) {
      self.row = row
      self.column = column
    }
  }

  /// The rows, with SGR escape sequences only when colour is on.
  public var lines: [String]
  /// The cursor, or nil to hide it.
  public var cursor: Cursor?

  /// Creates a screen.
  /// - Parameters:
  ///   - lines: the rows.
  ///   - cursor: the cursor.
  public init(lines: [String], cursor: Cursor? = nil) {
    self.lines = lines
    self.cursor = cursor
  }
}
