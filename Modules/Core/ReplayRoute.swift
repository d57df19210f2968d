import CourierDomain
import CourierPorts

/// Where the replay sends one collection's outbox entries and how it settles the answers: the
/// collection's `ReplaySender` and its `ReplayDecision` (conflict policy, record schema, merge
/// resolver, re-send bound). Registered on the store's `OutboxReplayer`, one per collection; an
/// entry of a collection without a route waits, with the later entries of its record.
package struct ReplayRoute: Sendable {
  /// The collection's name in the local store (`RecordKey.collection`).
  package var collection: String
  /// Sends one attempt of an entry.
  package var sender: any ReplaySender
  /// Settles what came back.
  package var decision: ReplayDecision

  /// Creates a route.
  /// - Parameters:
  ///   - collection: the collection's name in the local store.
  ///   - sender: what sends its entries.
  ///   - decision: how the answers are settled.
  package init(collection: String, sender: any ReplaySender, decision: ReplayDecision) {
    self.collection = collection
    self.sender = sender
    self.decision = decision
  }

  /// The route of a record collection with the default sender: the JSON request `ReplayRequest`
  /// describes, through `client`, proven by `DeliveryProof`.
  /// - Parameters:
  ///   - collection: the collection's declaration.
  ///   - client: the request pipeline.
  ///   - decision: how the answers are settled (its schema should be the collection's).
  /// - Returns: the route.
  package static func records(
    _ collection: CollectionDescription, client: APIClient, decision: ReplayDecision
  ) -> ReplayRoute {
    ReplayRoute(
      collection: collection.name, sender: RecordSender(client: client, collection: collection),
      decision: decision)
  }
}
