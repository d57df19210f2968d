import CourierDomain
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A record as `courier articles list` and `courier records … list` print it: one line, and one
/// object with `--json`. Its collection's own part is ``summary`` (an article's title, the
/// fields as JSON) and ``members``; the id, version, state and update time are every record's.
protocol ListedRecord: CollectionRecord {
  /// The server's version this copy is based on; nil when the server has not confirmed it.
  var version: Int? { get }
  /// When the server last changed it.
  var updatedAt: Date? { get }
  /// What a line shows after the version.
  var summary: String { get }
  /// Its `--json` object's own members (besides id, state, version, updated_at).
  var members: [String: JSONValue] { get }
}

extension Article: ListedRecord {
  var summary: String { title }
  var members: [String: JSONValue] { ["title": .string(title), "body": .string(body)] }
}

extension JSONRecord: ListedRecord {
  var summary: String { JSONValue.object(fields).jsonText }
  var members: [String: JSONValue] { ["fields": .object(fields)] }
}

extension SyncItem where Record: ListedRecord {
  /// `  ID  vN  SUMMARY[  [state, not sent yet]]`, appended as bytes: string interpolation cost
  /// ten times as much, a fifth of listing 10,000 articles (issue 14).
  func appendLine(to bytes: inout [UInt8]) {
    bytes.append(contentsOf: "  ".utf8)
    bytes.append(contentsOf: value.id.utf8)
    if let version = value.version {
      bytes.append(contentsOf: "  v".utf8)
      bytes.append(contentsOf: String(version).utf8)
    } else {
      bytes.append(contentsOf: "  new".utf8)
    }
    bytes.append(contentsOf: "  ".utf8)
    bytes.append(contentsOf: value.summary.utf8)
    if state != .synced {
      bytes.append(contentsOf: "  [".utf8)
      bytes.append(contentsOf: state.rawValue.utf8)
      bytes.append(contentsOf: ", not sent yet]".utf8)
    }
    bytes.append(UInt8(ascii: "\n"))
  }

  /// The item as one `--json` object.
  var jsonObject: JSONValue {
    var object = value.members
    object["id"] = .string(value.id)
    object["state"] = .string(state.rawValue)
    if let version = value.version { object["version"] = .int(version) }
    if let updated = value.updatedAt {
      object["updated_at"] = .string(RFC3339.string(from: updated))
    }
    return .object(object)
  }
}

/// How one collection's records are named on the command line.
struct RecordListing: Sendable {
  /// A record in a sentence: "article", "notes record".
  let noun: String
  /// The `--json` member holding a list's items.
  let itemsKey: String
  /// The `--json` `collection` member; nil for articles, whose lines never had one.
  let collection: String?
  /// What is wrong with a stored record that does not read.
  let unreadable: String
  /// The command that refreshes the list.
  let listCommand: String

  /// `courier articles`.
  static let articles = RecordListing(
    noun: "article", itemsKey: "articles", collection: nil,
    unreadable: "lack a title or body", listCommand: "courier articles list")

  /// `courier records NAME`.
  /// - Parameter name: the collection.
  /// - Returns: its listing.
  static func records(_ name: String) -> RecordListing {
    RecordListing(
      noun: "\(name) record", itemsKey: "records", collection: name,
      unreadable: "are not JSON objects", listCommand: "courier records \(name) list")
  }

  /// "1 article", "3 notes records".
  func count(_ number: Int) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
}
