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

/// An error whose message is already written for a person, for `TUIActions` implementations.
package struct TUIActionError: Error, Sendable, Hashable {
  /// The message shown on the status line.
  package var message: String

  /// Creates an error.
  /// - Parameter message: the sentence for a person.
  package init(message: String) {
    self.message = message
  }
}
