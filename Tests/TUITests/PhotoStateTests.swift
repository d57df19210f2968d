import CourierDomain
import Testing

@testable import CourierTUI

/// An article's photo state in the TUI (decision 2520): the words from where its compound
/// write's file part stands, in the row after the title and in the detail.
@Suite("Photo state")
struct PhotoStateTests {
  @Test("none, queued, uploading N%, stored, sent, downloaded")
  func words() {
    let none = CoreBridge.photoState(nil) { _, _ in nil }
    #expect(none == nil)
    #expect(CoreBridge.photoState("p1") { _, _ in nil } == "photo sent")
    let local = Attachment.local("u1")
    #expect(CoreBridge.photoState(local) { _, _ in nil } == "photo queued")
    let uploading = CoreBridge.photoState(local) { field, id in
      #expect(field == "photo" && id == "u1")
      return AttachmentPart(field: field, id: id, confirmed: 400, total: 1000, reference: nil)
    }
    #expect(uploading == "photo uploading 40%")
    let stored = CoreBridge.photoState(local) { field, id in
      AttachmentPart(field: field, id: id, confirmed: 0, total: 1000, reference: "p1")
    }
    #expect(stored == "photo stored, article sending")
    // Kept in the response cache for offline reading (decision 2507).
    let kept = CoreBridge.photoState("p1", part: { _, _ in nil }, kept: { $0 == "p1" })
    #expect(kept == "photo downloaded")
    #expect(
      CoreBridge.photoState("p2", part: { _, _ in nil }, kept: { $0 == "p1" }) == "photo sent")
  }

  @Test("the row shows the state after the title; the detail says it")
  func shown() {
    let article = ArticleItem(
      id: "1", title: "Sunset", body: "Red.", isPending: true, photo: "photo uploading 40%")
    let list = Renderer.render(
      TUIState(articles: [article]), size: RendererTests.narrow, colour: false
    ).lines
    #expect(list.contains { $0.contains("Sunset") && $0.contains("[photo uploading 40%]") })
    let detail = Renderer.render(
      TUIState(articles: [article], screen: .detail(id: "1", scroll: 0)),
      size: RendererTests.narrow, colour: false
    ).lines
    #expect(detail.contains { $0.contains("Photo: uploading 40%") }, "\(detail)")
  }
}
