import CourierDomain

/// A one-line question: today only the path of a photo to upload.
public struct Prompt: Sendable, Hashable {
  /// What is asked.
  public enum Purpose: Sendable, Hashable {
    /// The path of a photo to upload.
    case uploadPath
  }

  /// What is asked.
  public var purpose: Purpose
  /// The answer being typed.
  public var editor: LineEditor

  /// Creates a prompt.
  /// - Parameters:
  ///   - purpose: what is asked.
  ///   - text: the initial answer.
  public init(purpose: Purpose, text: String = "") {
    self.purpose = purpose
    self.editor = LineEditor(text: text)
  }
}
