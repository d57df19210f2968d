/// The size of a terminal in character cells.
package struct TerminalSize: Sendable, Hashable, CustomStringConvertible {
  /// Lines.
  package var rows: Int
  /// Columns.
  package var columns: Int

  /// Creates a size.
  /// - Parameters:
  ///   - rows: lines.
  ///   - columns: columns.
  package init(rows: Int, columns: Int) {
    self.rows = rows
    self.columns = columns
  }

  /// The smallest size the interface is laid out for.
  package static let minimum = TerminalSize(rows: 24, columns: 80)

  /// `80×24`.
  package var description: String { "\(columns)×\(rows)" }
}
