#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A whole local store held in memory: records, collection states and the outbox. The in-memory
/// adapter is this value behind a lock; the file adapter is this value rebuilt from its files.
/// `apply` is atomic: when one mutation fails, the earlier ones are undone.
package struct LocalStoreState: Sendable, Equatable {
  /// Every record, by key.
  package private(set) var records: [RecordKey: LocalRecord] = [:]
  /// Every collection's state, by name.
  package private(set) var collections: [String: CollectionState] = [:]
  /// Every outbox entry, by sequence number.
  package private(set) var entriesBySequence: [Int64: OutboxEntry] = [:]
  /// The sequence number the next appended entry gets; never reused.
  package private(set) var nextSequence: Int64 = 1
  private var sequenceByID: [UUID: Int64] = [:]

  /// Creates an empty store.
  package init() {}

  private enum Undo {
    case record(RecordKey, LocalRecord?)
    case collection(String, CollectionState?)
    case entry(Int64, OutboxEntry?)
    case entries([OutboxEntry])
  }

  /// Applies mutations, all or nothing.
  /// - Parameter mutations: the mutations, in order.
  /// - Throws: `StoreError` (`duplicate`, `notFound`) when one cannot apply; nothing changed then.
  package mutating func apply(_ mutations: [StoreMutation]) throws(StoreError) {
    var undo: [Undo] = []
    let savedNext = nextSequence
    do {
      for mutation in mutations { undo.append(try applyOne(mutation)) }
    } catch {
      for step in undo.reversed() { revert(step) }
      nextSequence = savedNext
      throw error
    }
  }

  /// Raises the next sequence number (restoring a counter saved by a compaction).
  /// - Parameter value: a lower bound for the next sequence number.
  package mutating func raiseNextSequence(to value: Int64) {
    nextSequence = max(nextSequence, value)
  }

  private mutating func applyOne(_ mutation: StoreMutation) throws(StoreError) -> Undo {
    switch mutation {
    case .putRecord(let record):
      let old = records.updateValue(record, forKey: record.key)
      return .record(record.key, old)
    case .deleteRecord(let key):
      return .record(key, records.removeValue(forKey: key))
    case .putCollection(let state):
      return .collection(state.collection, collections.updateValue(state, forKey: state.collection))
    case .insertEntry(let entry):
      if entriesBySequence[entry.sequence] != nil {
        throw StoreError(.duplicate, "Outbox sequence number \(entry.sequence) is already used.")
      }
      if sequenceByID[entry.id] != nil {
        throw StoreError(.duplicate, "Operation \(entry.id) is already in the outbox.")
      }
      setEntry(entry, at: entry.sequence)
      nextSequence = max(nextSequence, entry.sequence + 1)
      return .entry(entry.sequence, nil)
    case .replaceEntry(let entry):
      guard let old = entriesBySequence[entry.sequence] else {
        throw StoreError(.notFound, "No outbox entry has sequence number \(entry.sequence).")
      }
      if let owner = sequenceByID[entry.id], owner != entry.sequence {
        throw StoreError(.duplicate, "Operation \(entry.id) is already in the outbox.")
      }
      setEntry(entry, at: entry.sequence)
      return .entry(entry.sequence, old)
    case .deleteEntry(let sequence):
      guard let old = entriesBySequence[sequence] else {
        throw StoreError(.notFound, "No outbox entry has sequence number \(sequence).")
      }
      setEntry(nil, at: sequence)
      return .entry(sequence, old)
    case .setAttempts(let sequence, let id, let attempts):
      guard let old = entriesBySequence[sequence], old.id == id else {
        throw StoreError(.notFound, "No outbox entry \(id) has sequence number \(sequence).")
      }
      var counted = old
      counted.attempts = attempts
      setEntry(counted, at: sequence)
      return .entry(sequence, old)
    case .rebaseEntries(let rebase):
      let moved = entriesBySequence.values.filter { rebase.rebased($0) != nil }
      for entry in moved {
        if let rebased = rebase.rebased(entry) { setEntry(rebased, at: entry.sequence) }
      }
      return .entries(moved)
    }
  }

  private mutating func setEntry(_ entry: OutboxEntry?, at sequence: Int64) {
    if let old = entriesBySequence[sequence] { sequenceByID[old.id] = nil }
    entriesBySequence[sequence] = entry
    if let entry { sequenceByID[entry.id] = sequence }
  }

  private mutating func revert(_ step: Undo) {
    switch step {
    case .record(let key, let old): records[key] = old
    case .collection(let name, let old): collections[name] = old
    case .entry(let sequence, let old): setEntry(old, at: sequence)
    case .entries(let old): for entry in old { setEntry(entry, at: entry.sequence) }
    }
  }

  /// Looks a record up by collection and id.
  /// - Parameter key: which.
  /// - Returns: it, or nil.
  package func record(_ key: RecordKey) -> LocalRecord? { records[key] }

  /// A collection's records, by id.
  /// - Parameter collection: the collection.
  /// - Returns: its records, tombstones included, sorted by id.
  package func records(in collection: String) -> [LocalRecord] {
    records.values.filter { $0.key.collection == collection }.sorted { $0.key < $1.key }
  }

  /// A collection's state.
  /// - Parameter collection: the collection.
  /// - Returns: its state (empty when never refreshed).
  package func collectionState(_ collection: String) -> CollectionState {
    collections[collection] ?? CollectionState(collection: collection)
  }

  /// An entry by operation id.
  /// - Parameter id: the operation id.
  /// - Returns: the entry, or nil.
  package func entry(_ id: UUID) -> OutboxEntry? {
    sequenceByID[id].flatMap { entriesBySequence[$0] }
  }

  /// Every entry, in queue order.
  /// - Returns: the entries.
  package func orderedEntries() -> [OutboxEntry] {
    entriesBySequence.values.sorted { $0.sequence < $1.sequence }
  }

  /// A record's entries, in queue order.
  /// - Parameter key: the record.
  /// - Returns: the entries.
  package func entries(for key: RecordKey) -> [OutboxEntry] {
    entriesBySequence.values.filter { $0.key == key }.sorted { $0.sequence < $1.sequence }
  }

  /// Counts the entries by state.
  /// - Returns: the counts.
  package func counts() -> OutboxCounts {
    var counts = OutboxCounts()
    for entry in entriesBySequence.values {
      switch entry.state {
      case .pending: counts.pending += 1
      case .rejected: counts.rejected += 1
      case .conflicted: counts.conflicted += 1
      case .parked: counts.parked += 1
      }
    }
    return counts
  }
}
