/// The size of a terminal in character cells.
public struct TerminalSize: Sendable, Hashable, CustomStringConvertible {
  /// Lines.
  public var rows: Int
  /// Columns.
  public var columns: Int

  /// Creates a size.
  /// - Parameters:
  ///   - rows: lines.
  ///   - columns: columns.
  public init(rows: Int, columns: Int) {
    self.rows = rows
    self.columns = columns
  }

  /// The smallest size the interface is laid out for.
  public static let minimum = TerminalSize(rows: 24, columns: 80)

  /// `80×24`.
  public var description: String { "\(columns)×\(rows)" }
}
