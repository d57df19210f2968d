/// Fields of a record as typed on the command line, before the collection's declaration says
/// what each one holds: `--data '{...}'` (a JSON object) first, then each `--field NAME=VALUE`
/// in order over it.
package struct RecordFieldsInput: Sendable, Equatable {
  /// One `--field NAME=VALUE`.
  package struct Assignment: Sendable, Equatable {
    /// The field's name.
    package var name: String
    /// The text after `=`, read through the field's declared kind.
    package var value: String

    /// Creates an assignment.
    /// - Parameters:
    ///   - name: the field's name.
    ///   - value: its value as typed.
    package init(name: String, value: String) {
      self.name = name
      self.value = value
    }
  }

  /// The `--data` JSON text, if given.
  package var data: String?
  /// The `--field` assignments, in order.
  package var assignments: [Assignment]

  /// Creates the input.
  /// - Parameters:
  ///   - data: the `--data` JSON text.
  ///   - assignments: the `--field` assignments.
  package init(data: String? = nil, assignments: [Assignment] = []) {
    self.data = data
    self.assignments = assignments
  }

  /// Whether no field was given at all.
  package var isEmpty: Bool { data == nil && assignments.isEmpty }
}
