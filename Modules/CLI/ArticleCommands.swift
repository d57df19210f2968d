import CourierCore
import CourierDomain
import CourierLinux

/// `courier articles`: the built-in collection as typed articles, through the same list, delete
/// and write report as `courier records` (``CollectionCommands``); only the writes' flags
/// (`--title`, `--body`) are its own.
enum ArticleCommands {
  static func run(_ command: ArticlesCommand, context: CommandContext) async throws -> ExitCode {
    let articles = try context.session.collections.articles(warn: context.warn)
    let listing = RecordListing.articles
    switch command {
    case .list(let offline):
      return try await CollectionCommands.list(
        articles, offline: offline, as: listing, context: context)
    case .add(let title, let body):
      let receipt = try await articles.add(title: title, body: body)
      return try await CollectionCommands.afterWrite(
        "Added", receipt, in: articles, as: listing, isNew: true, context: context)
    case .edit(let id, let title, let body):
      guard var article = try articles.record(id: id)?.value else {
        return CollectionCommands.notFound(id, listing, context: context)
      }
      if let title { article.title = title }
      if let body { article.body = body }
      let receipt = try await articles.save(article)
      return try await CollectionCommands.afterWrite(
        "Edited", receipt, in: articles, as: listing, context: context)
    case .delete(let id):
      return try await CollectionCommands.delete(
        id: id, in: articles, as: listing, context: context)
    }
  }
}
