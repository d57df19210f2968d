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
  /// The server applied an update as a creation: its reply is `201 Created` with the record
  /// written, at a version not above the write's base (`DeliveryProof.Proof.recreated`). The
  /// record had been deleted there and this write made it anew (a server whose `PUT` creates a
  /// missing record, like the reference backend): an edit against a deletion (decision 2401).
  case recreated(ServerRecord)
  /// The send failed or the reply proved nothing: the classified error (a refusal with the
  /// server's body, a transient failure, `notTheServer`, a local failure...).
  case failed(CourierError)
}
