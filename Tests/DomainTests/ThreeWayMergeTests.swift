import CourierDomain
import Foundation
import Testing

@Suite("ThreeWayMerge")
struct ThreeWayMergeTests {
  enum Resolver: Sendable {
    /// Names its four arguments, so a row shows which field went to it with which values.
    case marker
    case lastWriteWinsLocalNewer
    case lastWriteWinsServerNewer
    case lastWriteWinsServerWithoutTime
    case dropping

    var resolve: FieldResolver {
      let edit = Date(timeIntervalSinceReferenceDate: 1_000)
      switch self {
      case .marker:
        return { field, base, mine, theirs in
          .string("\(field):\(Self.show(base))|\(Self.show(mine))|\(Self.show(theirs))")
        }
      case .lastWriteWinsLocalNewer:
        return ThreeWayMerge.lastWriteWins(
          localEditAt: edit, serverUpdatedAt: edit.addingTimeInterval(-5))
      case .lastWriteWinsServerNewer:
        return ThreeWayMerge.lastWriteWins(
          localEditAt: edit, serverUpdatedAt: edit.addingTimeInterval(5))
      case .lastWriteWinsServerWithoutTime:
        return ThreeWayMerge.lastWriteWins(localEditAt: edit, serverUpdatedAt: nil)
      case .dropping:
        return { _, _, _, _ in nil }
      }
    }

    static func show(_ value: JSONValue?) -> String {
      switch value {
      case nil: "-"
      case .string(let text)?: text
      case .number(let number)?: number.description
      case let other?: "\(other)"
      }
    }
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var base: [String: String]?
    var mine: [String: String]?
    var theirs: [String: String]?
    var baseKnown = true
    var resolver = Resolver.marker
    var expected: Expected
    var testDescription: String { name }
  }

  enum Expected: Sendable, Equatable {
    case merged([String: String])
    case deleted
    case conflict(MergeOutcome.Reason)
  }

  static let base = ["title": "T", "body": "B"]

  static let rows: [Row] = [
    Row(
      name: "nothing changed on either side", base: base, mine: base, theirs: base,
      expected: .merged(base)),
    Row(
      name: "only the user changed a field → the user's", base: base,
      mine: ["title": "T2", "body": "B"], theirs: base,
      expected: .merged(["title": "T2", "body": "B"])),
    Row(
      name: "only the server changed a field → the server's", base: base, mine: base,
      theirs: ["title": "T", "body": "B3"], expected: .merged(["title": "T", "body": "B3"])),
    Row(
      name: "different fields on each side → both edits kept", base: base,
      mine: ["title": "T2", "body": "B"], theirs: ["title": "T", "body": "B3"],
      expected: .merged(["title": "T2", "body": "B3"])),
    Row(
      name: "both changed a field to the same value → no resolver", base: base,
      mine: ["title": "X", "body": "B"], theirs: ["title": "X", "body": "B"],
      expected: .merged(["title": "X", "body": "B"])),
    Row(
      name: "both changed a field differently → the resolver, with base, mine, theirs",
      base: base, mine: ["title": "M", "body": "B"], theirs: ["title": "S", "body": "B"],
      expected: .merged(["title": "title:T|M|S", "body": "B"])),
    Row(
      name: "both changed, last-write-wins, local newer → the user's", base: base,
      mine: ["title": "M", "body": "B"], theirs: ["title": "S", "body": "B2"],
      resolver: .lastWriteWinsLocalNewer, expected: .merged(["title": "M", "body": "B2"])),
    Row(
      name: "both changed, last-write-wins, server newer → the server's", base: base,
      mine: ["title": "M", "body": "B1"], theirs: ["title": "S", "body": "B"],
      resolver: .lastWriteWinsServerNewer, expected: .merged(["title": "S", "body": "B1"])),
    Row(
      name: "both changed, last-write-wins, server without a time → the user's", base: base,
      mine: ["title": "M", "body": "B"], theirs: ["title": "S", "body": "B"],
      resolver: .lastWriteWinsServerWithoutTime, expected: .merged(["title": "M", "body": "B"])),
    Row(
      name: "the resolver answers nil → the field is left out", base: base,
      mine: ["title": "M", "body": "B"], theirs: ["title": "S", "body": "B"],
      resolver: .dropping, expected: .merged(["body": "B"])),
    Row(
      name: "a field a newer server added → kept", base: base, mine: ["title": "T2", "body": "B"],
      theirs: ["title": "T", "body": "B", "tags": "new"],
      expected: .merged(["title": "T2", "body": "B", "tags": "new"])),
    Row(
      name: "a field the user added → kept", base: base,
      mine: ["title": "T", "body": "B", "mood": "ok"], theirs: ["title": "T", "body": "B9"],
      expected: .merged(["title": "T", "body": "B9", "mood": "ok"])),
    Row(
      name: "both added the same field differently → the resolver, base absent", base: base,
      mine: ["title": "T", "body": "B", "x": "1"], theirs: ["title": "T", "body": "B", "x": "2"],
      expected: .merged(["title": "T", "body": "B", "x": "x:-|1|2"])),
    Row(
      name: "the user removed a field the server left → removed", base: base,
      mine: ["title": "T"], theirs: ["title": "T2", "body": "B"], expected: .merged(["title": "T2"])
    ),
    Row(
      name: "the server removed a field the user left → removed", base: base,
      mine: ["title": "T2", "body": "B"], theirs: ["title": "T"], expected: .merged(["title": "T2"])
    ),
    Row(
      name: "the user removed a field the server changed → the resolver", base: base,
      mine: ["title": "T"], theirs: ["title": "T", "body": "B2"],
      expected: .merged(["title": "T", "body": "body:B|-|B2"])),
    Row(
      name: "deleted here, unchanged there → deleted", base: base, mine: nil, theirs: base,
      expected: .deleted),
    Row(
      name: "deleted here, changed there → conflict", base: base, mine: nil,
      theirs: ["title": "T", "body": "B2"], expected: .conflict(.deletedHereChangedThere)),
    Row(
      name: "removed by the server, unchanged here → deleted", base: base, mine: base,
      theirs: nil, expected: .deleted),
    Row(
      name: "removed by the server, changed here → conflict", base: base,
      mine: ["title": "T2", "body": "B"], theirs: nil,
      expected: .conflict(.changedHereDeletedThere)),
    Row(
      name: "deleted on both sides → deleted", base: base, mine: nil, theirs: nil,
      expected: .deleted),
    Row(
      name: "unknown base: a field only one side has is kept, differing ones resolved",
      base: ["title": "stale"], mine: ["title": "M", "mood": "ok"],
      theirs: ["title": "S", "tags": "t"], baseKnown: false,
      expected: .merged(["title": "title:-|M|S", "mood": "ok", "tags": "t"])),
    Row(
      name: "unknown base: equal fields need no resolver", base: nil,
      mine: ["title": "T", "body": "B"], theirs: ["title": "T", "body": "B"], baseKnown: false,
      expected: .merged(["title": "T", "body": "B"])),
    Row(
      name: "unknown base: a delete against a record → conflict", base: base, mine: nil,
      theirs: base, baseKnown: false, expected: .conflict(.deletedHereChangedThere)),
    Row(
      name: "unknown base: a removal against a record → conflict", base: base, mine: base,
      theirs: nil, baseKnown: false, expected: .conflict(.changedHereDeletedThere)),
  ]

  static func json(_ fields: [String: String]?) -> JSONValue? {
    fields.map { .object($0.mapValues { .string($0) }) }
  }

  @Test("merge table", arguments: rows)
  func merge(_ row: Row) {
    let outcome = ThreeWayMerge.merge(
      base: Self.json(row.base), mine: Self.json(row.mine), theirs: Self.json(row.theirs),
      baseKnown: row.baseKnown, resolve: row.resolver.resolve)
    let expected: MergeOutcome =
      switch row.expected {
      case .merged(let fields): .merged(Self.json(fields) ?? .null)
      case .deleted: .deleted
      case .conflict(let reason): .conflict(reason)
      }
    #expect(outcome == expected)
  }

  @Test("values that are not objects merge as one field")
  func scalars() {
    let outcome = ThreeWayMerge.merge(
      base: .integer(1), mine: .integer(2), theirs: .integer(3),
      resolve: Resolver.marker.resolve)
    #expect(outcome == .merged(.string(":1|2|3")))
    #expect(
      ThreeWayMerge.merge(
        base: .integer(1), mine: .integer(1), theirs: .integer(3), resolve: { _, _, _, _ in nil })
        == .merged(.integer(3)))
  }

  @Test("nested objects are one field: no recursive merge")
  func nested() {
    let base: JSONValue = .object(["meta": .object(["a": .integer(1), "b": .integer(1)])])
    let mine: JSONValue = .object(["meta": .object(["a": .integer(2), "b": .integer(1)])])
    let theirs: JSONValue = .object(["meta": .object(["a": .integer(1), "b": .integer(2)])])
    let outcome = ThreeWayMerge.merge(
      base: base, mine: mine, theirs: theirs, resolve: ThreeWayMerge.serverWins)
    #expect(outcome == .merged(theirs))
    let local = ThreeWayMerge.merge(
      base: base, mine: mine, theirs: theirs, resolve: ThreeWayMerge.localWins)
    #expect(local == .merged(mine))
  }

  @Test("an edit of one field keeps a field nested to the limit and an integer past 64 bits exact")
  func exactUntouchedFields() throws {
    let deep =
      String(repeating: #"{"a":["#, count: (JSONValue.maximumDepth - 1) / 2) + "0.10"
      + String(repeating: "]}", count: (JSONValue.maximumDepth - 1) / 2)
    let base = try JSONValue(
      parsing: #"{"big":18446744073709551617,"meta":\#(deep),"note":"n","title":"old"}"#)
    // The user changed the title; the server changed the note.
    let mine = try JSONValue(
      parsing: #"{"big":18446744073709551617,"meta":\#(deep),"note":"n","title":"new"}"#)
    let theirs = try JSONValue(
      parsing: #"{"big":18446744073709551617,"meta":\#(deep),"note":"m","title":"old"}"#)
    for resolver in [ThreeWayMerge.serverWins, ThreeWayMerge.localWins] {
      let outcome = ThreeWayMerge.merge(
        base: base, mine: mine, theirs: theirs, resolve: resolver)
      guard case .merged(let merged) = outcome else {
        Issue.record("not merged: \(outcome)")
        continue
      }
      let exact =
        merged.jsonText
        == #"{"big":18446744073709551617,"meta":\#(deep),"note":"m","title":"new"}"#
      #expect(exact)
    }
    // Without a base: the fields both sides hold alike are kept as they are.
    let unknown = ThreeWayMerge.merge(
      base: nil, mine: mine, theirs: mine, baseKnown: false, resolve: ThreeWayMerge.serverWins)
    let same = unknown == .merged(mine)
    #expect(same)
    // A big integer changed by one on the server is a change, not a Double's rounding.
    let bumped = try JSONValue(
      parsing: #"{"big":18446744073709551618,"meta":\#(deep),"note":"n","title":"old"}"#)
    let outcome = ThreeWayMerge.merge(
      base: base, mine: mine, theirs: bumped, resolve: ThreeWayMerge.serverWins)
    #expect(outcome.mergedValue?["big"]?.jsonText == "18446744073709551618")
  }
}

extension MergeOutcome {
  /// The merged fields, when the merge gave some.
  var mergedValue: JSONValue? {
    if case .merged(let value) = self { return value }
    return nil
  }
}
