import Foundation
import Testing

@testable import CourierCore

@Suite("UploadPreparation")
struct UploadPreparationTests {
  static let names = [
    "IMG_1.HEIC", "a.b.png", ".profile", "README", "photo.", "x/y.jpg", "dir.d/file", "a..b",
    "", ".", "..", "日本.jpeg", "trail/", "name.tar.gz", " .jpg",
  ]

  /// The compressed part's name: `NSString.deletingPathExtension`'s, without Foundation
  /// (decision 1414).
  @Test("a name without its extension, as NSString gives it", arguments: names)
  func withoutExtension(_ name: String) {
    #expect(
      UploadPreparation.withoutExtension(name) == (name as NSString).deletingPathExtension)
  }
}
