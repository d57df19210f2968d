import CourierCore
import CourierDomain
import CourierPorts
import CourierSystem
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The record collections a session syncs, each offline first through ``Records``: articles
/// (built in, typed as `Article`), those the config file declares under `collections`, and any
/// the caller declares. They share the local store, its outbox and its one replayer, which
/// has a route for every declared collection from the start (decision 2303). Reach it as
/// ``CourierSession/collections``.
///
/// ```swift
/// let articles = try courier.collections.articles()
/// try await articles.add(title: "Hello")
/// let notes = try courier.collections.records("notes")
/// try await notes.add(["text": "hi"])
/// _ = try await courier.sync()        // both, in the order they were written
/// ```
public struct Collections: Sendable {
  private let store: SessionStore
  private let opened = Opened()

  /// The façades made so far, one per collection, shared by the copies of this value.
  private final class Opened: Sendable {
    let articles = Mutex<Articles?>(nil)
    let records = Mutex<[String: Records<JSONRecord>]>([:])
  }

  init(store: SessionStore) { self.store = store }

  /// The collections this session syncs: articles, then those the configuration declares.
  public var declared: [CollectionDescription] { store.declared }

  /// The articles, typed. Opened on first use and shared afterwards.
  /// - Parameter warn: told when the data folder's permissions were tightened as it was
  ///   opened (standard error by default).
  /// - Returns: the articles.
  /// - Throws: `StoreError` naming the file when the local store cannot be opened.
  public func articles(
    warn: @escaping @Sendable (String) -> Void = PrivateFiles.warnOnStandardError
  ) throws -> Articles {
    let shared = try store.open(warn: warn)
    let engine = engineMaker(Article.self, .articles, resolver: nil)
    return opened.articles.withLock { cached in
      if let cached { return cached }
      let articles = Articles(
        collection: .articles, shared: shared, projection: Articles.projection,
        makeEngine: engine)
      cached = articles
      return articles
    }
  }

  /// The records of a declared collection (or `articles`, as JSON). Opened on first use and
  /// shared afterwards.
  /// - Parameters:
  ///   - name: the collection's name, as the config file declares it.
  ///   - warn: told when the data folder's permissions were tightened as it was opened.
  /// - Returns: the records.
  /// - Throws: `CourierError.invalidInput` naming the declared collections when none has this
  ///   name; `StoreError` naming the file when the local store cannot be opened.
  public func records(
    _ name: String, warn: @escaping @Sendable (String) -> Void = PrivateFiles.warnOnStandardError
  ) throws -> Records<JSONRecord> {
    guard let collection = declared.first(where: { $0.name == name }) else {
      let known = declared.map(\.name).joined(separator: ", ")
      throw CourierError(
        .invalidInput, code: "unknown_collection",
        serverMessage: "No collection is named “\(LogText.escaped(name))” (collections: \(known)); "
          + "declare it under \"collections\" in the config file.")
    }
    return try records(collection, warn: warn)
  }

  /// The records of a collection the caller declares, as ``records(_:warn:)``. A declaration
  /// the configuration does not hold, or one with a resolver, gets its route on the store's
  /// replayer now, so the session's `sync()` and `watch()` send its writes.
  /// - Parameters:
  ///   - collection: the declaration.
  ///   - resolver: settles fields both sides changed under the merge policy; nil for last
  ///     write wins per field.
  ///   - warn: told when the data folder's permissions were tightened as it was opened.
  /// - Returns: the records.
  /// - Throws: `StoreError` naming the file when the local store cannot be opened.
  public func records(
    _ collection: CollectionDescription, resolver: FieldResolver? = nil,
    warn: @escaping @Sendable (String) -> Void = PrivateFiles.warnOnStandardError
  ) throws -> Records<JSONRecord> {
    let shared = try store.open(warn: warn)
    let environment = store.environment
    let declared = declared
    return opened.records.withLock { cached in
      if resolver == nil, let existing = cached[collection.name],
        existing.collection == collection
      {
        return existing
      }
      if resolver != nil || !declared.contains(collection) {
        shared.register(
          shared.route?(collection, resolver)
            ?? .records(
              collection, client: environment.client,
              decision: ReplayDecision(
                policy: environment.config.conflictPolicy, collection: collection,
                resolver: resolver)))
      }
      let records = Records<JSONRecord>(
        collection: collection, shared: shared,
        makeEngine: engineMaker(JSONRecord.self, collection, resolver: resolver))
      cached[collection.name] = records
      return records
    }
  }

  /// Makes a collection's engine over the store's replayer, whose route is registered already.
  private func engineMaker<Record: CollectionRecord>(
    _ type: Record.Type, _ collection: CollectionDescription, resolver: FieldResolver?
  ) -> @Sendable (OutboxReplayer) -> SyncEngine<Record> {
    let environment = store.environment
    return { replayer in
      var configuration = SyncEngine<Record>.Configuration(
        conflictPolicy: environment.config.conflictPolicy)
      configuration.mergeResolver = resolver
      return SyncEngine(
        replayer: replayer, client: environment.client, collection: collection,
        configuration: configuration, registersRoute: false)
    }
  }
}
