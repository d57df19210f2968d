/// A failure of a local store (record store or outbox): what went wrong, on which file and line,
/// in words a person can act on. A store never resets itself silently: a damaged file is reported
/// with this error and left as it was.
package struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of failure this is.
  package enum Code: String, Sendable, Codable, CaseIterable {
    /// The file exists but is not a store, or its content is damaged.
    case corrupt
    /// The file could not be opened, read or written (permissions, disk full, I/O error).
    case io
    /// The file was written by a newer version of Courier, with a schema this one does not know.
    case newerSchema
    /// No outbox entry has this operation id.
    case notFound
    /// An outbox entry with this operation id (or sequence number) already exists.
    case duplicate
    /// The caller asked for something inconsistent (a change and an operation on two records).
    case invalidInput
    /// The store was closed, or an earlier write failed and it must be reopened.
    case unusable
    /// The store's file or folder could not be created (the path is a folder or a file where a
    /// folder is needed, no permission to create it).
    case cannotCreate
    /// Another process holds the store (or the operation) and this one did not wait for it.
    case busy
  }

  /// The kind of failure.
  package var code: Code
  /// A sentence for a person, naming the file when there is one.
  package var message: String
  /// The file concerned, when there is one.
  package var path: String?
  /// The line of the file concerned (1-based), for line-oriented files.
  package var line: Int?
  /// The underlying error or library message, for logs.
  package var underlying: String?

  /// Creates an error.
  /// - Parameters:
  ///   - code: the kind of failure.
  ///   - message: a sentence for a person.
  ///   - path: the file concerned.
  ///   - line: the line concerned.
  ///   - underlying: the underlying error, for logs.
  package init(
    _ code: Code, _ message: String, path: String? = nil, line: Int? = nil,
    underlying: String? = nil
  ) {
    self.code = code
    self.message = message
    self.path = path
    self.line = line
    self.underlying = underlying
  }

  /// What a person can do about it, by kind: nil when the message already says it.
  package var advice: String? {
    switch code {
    case .corrupt:
      return "Move the file aside (nothing was changed in it) and run the command again; "
        + "changes that were not yet sent are in that file."
    case .io:
      return "Check that the data folder exists, is writable and that the disk is not full."
    case .newerSchema:
      return "It was written by a newer Courier: use that version, or another data folder."
    case .cannotCreate:
      return "Check that the data folder's path is a folder you can write to "
        + "(set it with --data-dir or COURIER_DATA_DIR)."
    case .busy:
      return "Wait for the other process to finish, or stop it."
    case .notFound, .duplicate, .invalidInput, .unusable:
      return nil
    }
  }

  /// The message, with the underlying cause when known.
  package var description: String {
    var text = "\(code.rawValue): \(message)"
    if let underlying { text += " (\(underlying))" }
    return text
  }
}
