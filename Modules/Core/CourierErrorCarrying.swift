import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An error that carries a `CourierError` along with more context (a response, say), so the
/// executor can decide on it and hand the original back.
package protocol CourierErrorCarrying: Error {
  /// The classified failure.
  var courierError: CourierError { get set }
}
