import CourierDomain

/// A queued upload as the list screen shows it: a line with its name and its percentage
/// (the bytes the server confirmed, or those being sent now), above the status line.
package struct QueuedUploadItem: Sendable, Hashable {
  /// The name it is sent under.
  package var name: String
  /// Whole percent shown (never back to 0 when a transfer resumes).
  package var percent: Int
  /// Whether this process is sending it now.
  package var isSending: Bool
  /// Whether the server refused it (kept until discarded).
  package var isRefused: Bool

  /// Creates an item.
  /// - Parameters:
  ///   - name: the name.
  ///   - percent: the percentage shown.
  ///   - isSending: whether it is being sent now.
  ///   - isRefused: whether the server refused it.
  package init(name: String, percent: Int, isSending: Bool = false, isRefused: Bool = false) {
    self.name = name
    self.percent = percent
    self.isSending = isSending
    self.isRefused = isRefused
  }

  /// The item of a queued upload's progress.
  /// - Parameter progress: the façade's progress.
  package init(_ progress: QueuedUploadProgress) {
    var refused = false
    if case .rejected = progress.entry.state { refused = true }
    self.init(
      name: progress.name, percent: progress.percent, isSending: progress.sending != nil,
      isRefused: refused)
  }
}
