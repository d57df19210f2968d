import CourierDomain

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the interface needs from the core. The wiring implements it with the real sync engine,
/// uploader and stores, and reports the consequences through the `TUIUpdate` stream; a thrown
/// error is shown on the status line.
package protocol TUIActions: Sendable {
  /// Fetches the articles from the network again (the cache stays on screen if it fails).
  /// - Throws: what stopped it; its message is shown.
  func refresh() async throws
  /// Sends the outbox now.
  /// - Throws: what stopped it; its message is shown.
  func syncNow() async throws
  /// Creates an article (optimistically: it appears at once, pending).
  /// - Parameters:
  ///   - title: the title.
  ///   - body: the body.
  /// - Throws: what stopped it; its message is shown.
  func addArticle(title: String, body: String) async throws
  /// Changes an article.
  /// - Parameters:
  ///   - id: the article.
  ///   - title: the new title.
  ///   - body: the new body.
  /// - Throws: what stopped it; its message is shown.
  func editArticle(id: String, title: String, body: String) async throws
  /// Deletes an article.
  /// - Parameter id: the article.
  /// - Throws: what stopped it; its message is shown.
  func deleteArticle(id: String) async throws
  /// Uploads the photo at a path as the person typed it (`~` not expanded yet), reporting
  /// progress through `TUIUpdate.upload`.
  /// - Parameter path: the path.
  /// - Throws: what stopped it; its message is shown.
  func upload(path: String) async throws
}
