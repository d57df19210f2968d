#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What came back from sending one outbox entry, once classified and checked for proof of
/// delivery: the input of `ReplayDecision`.
package enum ReplayAnswer: Sendable, Equatable {
  /// The reply proved that the intended server applied the write (`DeliveryProof.write`): the
  /// server's record for a create or an update, nil for a delete.
  case delivered(ServerRecord?)
  /// The send failed or the reply proved nothing: the classified error (a refusal with the
  /// server's body, a transient failure, `notTheServer`, a local failure...).
  case failed(CourierError)
}
