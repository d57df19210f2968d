import CourierDomain
import CourierPorts
import Foundation
import Synchronization

/// An error that carries a `CourierError` along with more context (a response, say), so the
/// executor can decide on it and hand the original back.
public protocol CourierErrorCarrying: Error {
  /// The classified failure.
  var courierError: CourierError { get set }
}
