import CourierDomain

/// A photo upload in progress or just finished.
package struct UploadState: Sendable, Hashable {
  /// The file's name (not its full path).
  package var fileName: String
  /// Bytes sent so far.
  package var sent: Int64
  /// Bytes to send in all (0 when not known yet).
  package var total: Int64
  /// The phase.
  package var phase: UploadPhase

  /// Creates an upload state.
  /// - Parameters:
  ///   - fileName: the file's name.
  ///   - sent: bytes sent.
  ///   - total: bytes in all.
  ///   - phase: the phase.
  package init(fileName: String, sent: Int64 = 0, total: Int64 = 0, phase: UploadPhase) {
    self.fileName = fileName
    self.sent = sent
    self.total = total
    self.phase = phase
  }

  /// The fraction sent, from 0 to 1 (0 when the total is not known).
  package var fraction: Double {
    guard total > 0 else { return 0 }
    return min(1, max(0, Double(sent) / Double(total)))
  }
}
