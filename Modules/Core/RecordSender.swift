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
/// reply to be the collection's record with the id written and a newer version (decision 0414),
/// `.recreated` when an update was answered `201` with the record made anew (decision 2401).
/// It can also probe the server about an entry's record (`ReplayProbing`).
///
/// Its requests log to the client's logger with the entry's `courier.operation.id` and
/// `courier.collection` (decision 2203); the replayer records a proven delivery's lag.
package struct RecordSender: ReplaySender, ReplayProbing {
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
      // stays pending (decision 0414). An update the server made anew is told apart (2401).
      switch try DeliveryProof.proof(
        operation, response: reply.response, body: reply.body.bytes, attempts: reply.attempts,
        collection: collection)
      {
      case .applied(let record): return .delivered(record)
      case .recreated(let record): return .recreated(record)
      }
    } catch let error as CourierError {
      return .failed(error)
    } catch {
      return .failed(CourierError.wrapping(error, context: "sending \(operation.key)"))
    }
  }

  /// Asks the server about an entry's record, writing nothing (decision 2401): `GET
  /// <path>/<id>`, without a validator and with `Cache-Control: no-cache`.
  /// - Parameter entry: the entry about to be parked.
  /// - Returns: nil when the server itself answered: the collection's record with this id, or a
  ///   refusal with the server's own error body (a `404` for a record it does not have); else
  ///   the failure (a page, a redirect, a reply that is not the record, offline...).
  package func probe(_ entry: OutboxEntry) async -> CourierError? {
    let path = "\(collection.path)/\(ReplayRequest.pathSegment(entry.key.id))"
    do {
      let request = try client.request(.get, path, headerFields: [.cacheControl: "no-cache"])
      let (response, body) = try await client.send(request)
      let json: JSONValue
      do {
        json = try JSONValue(parsing: body.bytes)
      } catch {
        // Told apart as any reply is (decision 2423): JSON that does not parse is a bad reply,
        // anything else a page from something other than the server.
        return DeliveryProof.unparseable(
          contentType: response.headerFields[.contentType], status: response.status.code,
          bytes: body.bytes.count, context: "GET \(path)", error: error)
      }
      if let record = try? collection.schema.serverRecord(from: json), record.id == entry.key.id {
        return nil
      }
      return CourierError(
        .notTheServer, status: response.status.code,
        code: DeliveryProof.Shortfall.notRecord.rawValue,
        underlying: "\(body.bytes.count) bytes", context: "GET \(path)")
    } catch let error as CourierError {
      // The API's own refusal (`ResponseClassifier` gives these kinds only with its error body).
      return error.kind == .business || error.kind == .conflict ? nil : error
    } catch {
      return CourierError.wrapping(error, context: "GET \(path)")
    }
  }
}
