import CourierDomain
import Foundation
import Testing

@Suite("Article")
struct ArticleTests {
  static func fields(
    _ id: String, _ values: [String?], state: LocalState = .synced, deleted: Bool = false,
    version: Int? = 1
  ) -> RecordFields {
    RecordFields(
      id: id, state: state, isDeleted: deleted, version: version,
      updatedAt: Date(timeIntervalSinceReferenceDate: 500), values: values)
  }

  @Test("a cached snapshot from a projection read: readable, deleted and unreadable records")
  func cachedSnapshot() {
    let now = Date(timeIntervalSinceReferenceDate: 1_000)
    let snapshot = Article.cachedSnapshot(
      [
        Self.fields("a", ["A", "body a"]),
        Self.fields("b", [nil, nil], state: .deleted, deleted: true),
        Self.fields("c", ["C", nil]),
        Self.fields("d", [nil, "body d"]),
        Self.fields("e", ["E", ""], state: .created, version: nil),
      ], lastRefresh: Date(timeIntervalSinceReferenceDate: 900), now: now)
    #expect(snapshot.source == .cache)
    #expect(snapshot.items.map(\.value.id) == ["a", "e"])
    #expect(snapshot.items.map(\.state) == [.synced, .created])
    #expect(
      snapshot.items.first?.value
        == Article(
          id: "a", title: "A", body: "body a", version: 1,
          updatedAt: Date(timeIntervalSinceReferenceDate: 500)))
    #expect(snapshot.items.last?.value.version == nil)
    #expect(snapshot.deletedIDs == ["b"])
    #expect(snapshot.unreadable == ["c", "d"])
    #expect(snapshot.age == 100)
  }

  @Test("never refreshed: no age; a future refresh time counts as no age at all")
  func ages() {
    let now = Date(timeIntervalSinceReferenceDate: 1_000)
    #expect(Article.cachedSnapshot([], lastRefresh: nil, now: now).age == nil)
    #expect(
      Article.cachedSnapshot(
        [], lastRefresh: Date(timeIntervalSinceReferenceDate: 2_000), now: now
      ).age == 0)
  }
}
