import CourierDomain

/// A one-line question: today only the path of a photo to upload.
package struct Prompt: Sendable, Hashable {
  /// What is asked.
  package enum Purpose: Sendable, Hashable {
    /// The path of a photo to upload.
    case uploadPath
  }

  /// What is asked.
  package var purpose: Purpose
  /// The answer being typed.
  package var editor: LineEditor

  /// Creates a prompt.
  /// - Parameters:
  ///   - purpose: what is asked.
  ///   - text: the initial answer.
  package init(purpose: Purpose, text: String = "") {
    self.purpose = purpose
    self.editor = LineEditor(text: text)
  }
}
