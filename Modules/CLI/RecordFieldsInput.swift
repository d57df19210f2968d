/// Fields of a record as typed on the command line, before the collection's declaration says
/// what each one holds: `--data '{...}'` (a JSON object) first, then each `--field NAME=VALUE`
/// in order over it.
public struct RecordFieldsInput: Sendable, Equatable {
  /// One `--field NAME=VALUE`.
  public struct Assignment: Sendable, Equatable {
    /// The field's name.
    public var name: String
    /// The text after `=`, read through the field's declared kind.
    public var value: String

    /// Creates an assignment.
    /// - Parameters:
    ///   - name: the field's name.
    ///   - value: its value as typed.
    public init(name: String, value: String) {
      self.name = name
      self.value = value
    }
  }

  /// The `--data` JSON text, if given.
  public var data: String?
  /// The `--field` assignments, in order.
  public var assignments: [Assignment]

  /// Creates the input.
  /// - Parameters:
  ///   - data: the `--data` JSON text.
  ///   - assignments: the `--field` assignments.
  public init(data: String? = nil, assignments: [Assignment] = []) {
    self.data = data
    self.assignments = assignments
  }

  /// Whether no field was given at all.
  public var isEmpty: Bool { data == nil && assignments.isEmpty }
}
