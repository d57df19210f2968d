import CourierDomain

/// The add/edit form: two line editors.
package struct EditForm: Sendable, Hashable {
  /// Which field has the cursor.
  package enum Field: Sendable, Hashable {
    /// The title.
    case title
    /// The body.
    case body
  }

  /// The article edited, or nil for a new one.
  package var articleID: String?
  /// The title being typed.
  package var title: LineEditor
  /// The body being typed.
  package var body: LineEditor
  /// The field with the cursor.
  package var focus: Field

  /// Creates a form.
  /// - Parameters:
  ///   - articleID: the article edited, nil for a new one.
  ///   - title: the initial title.
  ///   - body: the initial body.
  ///   - focus: the field with the cursor.
  package init(articleID: String?, title: String = "", body: String = "", focus: Field = .title) {
    self.articleID = articleID
    self.title = LineEditor(text: title)
    self.body = LineEditor(text: body)
    self.focus = focus
  }
}
