/// Where `courier login` takes the password from.
package enum PasswordSource: Sendable, Equatable {
  /// `--password P`.
  case argument(String)
  /// `--password-stdin`, or standard input when not a terminal.
  case standardInput
  /// `COURIER_PASSWORD`.
  case environment
}
