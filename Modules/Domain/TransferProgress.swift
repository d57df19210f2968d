#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Bytes sent so far and the total, for progress reports.
public struct TransferProgress: Sendable, Equatable {
  /// Bytes sent so far.
  public var sent: Int64
  /// Total bytes to send, when known.
  public var total: Int64

  /// Creates a progress value.
  /// - Parameters:
  ///   - sent: bytes sent so far.
  ///   - total: total bytes to send.
  public init(sent: Int64, total: Int64) {
    self.sent = sent
    self.total = total
  }

  /// Sent over total in 0...1 (0 while the total is unknown).
  package var fraction: Double { total > 0 ? min(1, Double(sent) / Double(total)) : 0 }
}
