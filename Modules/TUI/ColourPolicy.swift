import CourierSignals
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Whether colour may be used: only on a terminal, never with `NO_COLOR` (present at all, as
/// the `courier` command line reads it) and never on a `dumb` terminal.
package enum ColourPolicy {
  /// Decides.
  /// - Parameters:
  ///   - isTerminal: whether the output is a TTY.
  ///   - environment: the process environment.
  /// - Returns: whether to colour.
  package static func isEnabled(isTerminal: Bool, environment: [String: String]) -> Bool {
    isTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
  }
}
