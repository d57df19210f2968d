import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why the event loop stopped.
package enum TUIExit: Sendable, Hashable {
  /// The person quit (q, Ctrl-C).
  case quit
  /// A terminating signal arrived (SIGINT, SIGTERM, SIGHUP).
  case signal(Int32)
  /// The terminal's input closed.
  case inputClosed

  /// The process exit status for it: 0, or 128 + the signal, or 1.
  package var status: Int32 {
    switch self {
    case .quit: return 0
    case .signal(let number): return 128 + number
    case .inputClosed: return 1
    }
  }
}
