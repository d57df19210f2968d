import CourierCore
import CourierDomain
import CourierLinux

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

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
    case .add(let title, let body, let attach):
      let files = try attachments(attach, context: context)
      let article = Article(id: UUID().uuidString.lowercased(), title: title, body: body)
      let receipt =
        files.isEmpty
        ? try await articles.add(article) : try await articles.add(article, attaching: files)
      return try await CollectionCommands.afterWrite(
        "Added", receipt, in: articles, as: listing, isNew: true, context: context)
    case .edit(let id, let title, let body, let attach, let detach):
      let files = try attachments(attach, context: context)
      guard var article = try articles.record(id: id)?.value else {
        return CollectionCommands.notFound(id, listing, context: context)
      }
      if let title { article.title = title }
      if let body { article.body = body }
      for field in detach {
        guard field == "photo" else { throw unknownField(field) }
        article.photo = nil
      }
      let receipt =
        files.isEmpty
        ? try await articles.save(article) : try await articles.save(article, attaching: files)
      return try await CollectionCommands.afterWrite(
        "Edited", receipt, in: articles, as: listing, context: context)
    case .delete(let id):
      return try await CollectionCommands.delete(
        id: id, in: articles, as: listing, context: context)
    }
  }

  /// The files `--attach FIELD=FILE` names, by field, relative to the working directory.
  static func attachments(_ options: [String], context: CommandContext) throws -> [String: URL] {
    var files: [String: URL] = [:]
    for option in options {
      guard let equals = option.firstIndex(of: "="), equals != option.startIndex,
        option.index(after: equals) != option.endIndex
      else {
        throw CourierError(
          .invalidInput, code: "attach_not_field_file",
          serverMessage: "--attach takes FIELD=FILE (photo=./sunset.jpg), not “\(option)”.")
      }
      let field = String(option[..<equals])
      guard Article.attachmentFields.contains(field) else { throw unknownField(field) }
      files[field] = URL(fileURLWithPath: String(option[option.index(after: equals)...]))
    }
    return files
  }

  private static func unknownField(_ field: String) -> CourierError {
    CourierError(
      .invalidInput, code: "not_an_attachment",
      serverMessage: "Articles have one attachment field, photo (not “\(field)”).", field: field)
  }
}
