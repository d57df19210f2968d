import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The default `ReplaySender` of a record collection: sends the request `ReplayRequest`
/// describes (`PUT <path>/<id>` or `DELETE`, `If-Match`, `Idempotency-Key`, canonical JSON body)
/// through the request pipeline, and answers `.delivered` only when `DeliveryProof` finds the
/// reply to be the collection's record with the id written and a newer version (decision 0414).
///
/// Its requests log to the client's logger with the entry's `courier.operation.id` and
/// `courier.collection` (decision 2203); the replayer records a proven delivery's lag.
package struct RecordSender: ReplaySender {
  /// The request pipeline (retries, auth, logging, the transport).
  package let client: APIClient
  /// The collection: its path, record schema and what its server's answers mean.
  package let collection: CollectionDescription

  /// Creates a sender.
  /// - Parameters:
  ///   - client: the request pipeline.
  ///   - collection: the collection whose entries it sends.
  package init(client: APIClient, collection: CollectionDescription) {
    self.client = client
    self.collection = collection
  }

  /// The transport's (see `Transport.taskExecutor`): a sequential replay then waits for each
  /// answer on the transport's own thread.
  package var taskExecutor: (any TaskExecutor)? { client.transport.taskExecutor }

  /// Sends one attempt of an entry.
  /// - Parameters:
  ///   - entry: the entry, its attempt already counted.
  ///   - progress: told the body bytes sent, when someone follows it.
  /// - Returns: `.delivered` with the server's record (nil for a delete) when the reply proves
  ///   it; `.failed` with the classified error otherwise.
  package func send(_ entry: OutboxEntry, progress: (@Sendable (TransferProgress) -> Void)?)
    async -> ReplayAnswer
  {
    let operation = entry.operation
    do {
      let described = ReplayRequest(operation, collection: collection)
      let request = try client.request(
        described.method, described.path, headerFields: described.headerFields)
      let body = try described.body().map { RequestBody.bytes($0) }
      let reply = try await client.exchange(
        request, body: body, progress: progress, options: client.options.forEntry(entry))
      // A login page or any other 2xx that is not the record throws `notTheServer`: the entry
      // stays pending (decision 0414).
      return .delivered(
        try DeliveryProof.write(
          operation, response: reply.response, body: reply.body.bytes, attempts: reply.attempts,
          collection: collection))
    } catch let error as CourierError {
      return .failed(error)
    } catch {
      return .failed(CourierError.wrapping(error, context: "sending \(operation.key)"))
    }
  }
}
