import CourierDomain
import CourierPorts

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The bytes one upload sends, chosen once before any request (decision 0310): the original
/// file, or its compressed copy, with the name and media type they go under.
struct PreparedUpload: Sendable {
  /// The original file's part (its size, its sniffed type).
  let original: MultipartPart
  /// The file part that goes out: the compressed copy or the original.
  let part: MultipartPart
  /// Which one and why.
  let verdict: CompressionDecision.Verdict

  /// The file sent.
  var url: URL {
    if case .file(let url, _) = part.content { return url }
    return URL(fileURLWithPath: "/dev/null")
  }

  /// The bytes sent.
  var length: Int64 {
    if case .file(_, let size) = part.content { return size }
    return 0
  }

  /// The original's size.
  var originalSize: Int64 {
    if case .file(_, let size) = original.content { return size }
    return 0
  }
}

/// "Prepare the bytes to send": the one step plain, resumable and queued uploads share. It
/// sweeps what killed uploads left in the temporary folder, opens the original (a regular
/// file only), compresses an image when asked and worth it (`CompressionDecision`), refuses
/// an original that must not leave the device, and removes its temporary files when the work
/// it runs is done, whatever the outcome.
struct UploadPreparation: Sendable {
  let compressor: any ImageCompressor
  let temporaryDirectory: URL

  /// Prepares the bytes, reports `compressing` and `prepared`, then runs `work` with them and
  /// the upload's temporary files (for a body file the work writes).
  /// - Returns: what `work` returned.
  /// - Throws: `CourierError`: `fileUnavailable`, `invalidInput` for an original that must not
  ///   be sent, what `work` threw (classified), `cancelled` when the task was cancelled.
  func run<T: Sendable>(
    _ request: UploadRequest, onState: @escaping @Sendable (UploadState) -> Void,
    _ work: (PreparedUpload, TemporaryFiles) async throws -> T
  ) async throws -> T {
    // What an upload killed before its cleanup left (its process is gone) goes first, once.
    CourierTemporaryFile.sweepOnce(temporaryDirectory)
    let temporary = TemporaryFiles()
    defer { temporary.removeAll() }
    do {
      let original = try MultipartPart.file("file", at: request.file)
      let (part, verdict) = try await choose(
        request, original: original, temporary: temporary, onState: onState)
      onState(.prepared(verdict))
      if verdict.send == .nothing {
        throw CourierError(
          .invalidInput, code: CompressionDecision.Reason.originalHasLocation.rawValue,
          serverMessage: verdict.message, field: "file", context: request.file.path)
      }
      let prepared = PreparedUpload(original: original, part: part, verdict: verdict)
      return try await work(prepared, temporary)
    } catch {
      var failure = CourierError.wrapping(
        error, context: "upload \(request.file.lastPathComponent)")
      if Task.isCancelled { failure.kind = .cancelled }
      throw failure
    }
  }

  /// Compresses when asked and worth it, and decides which file part goes out.
  func choose(
    _ request: UploadRequest, original: MultipartPart, temporary: TemporaryFiles,
    onState: @Sendable (UploadState) -> Void
  ) async throws -> (MultipartPart, CompressionDecision.Verdict) {
    let name = request.file.lastPathComponent
    guard case .file(_, let originalSize) = original.content else { return (original, noVerdict) }
    let sniffedImage = original.contentType?.hasPrefix("image/") ?? false
    var info: ImageInfo?
    var isImage = sniffedImage
    // Only a compression reads the image: without one, nothing loads the image library to
    // find the original's location for the message (40 ms and ~130 libraries).
    if sniffedImage && request.compress {
      do {
        info = try await compressor.inspect(request.file)
      } catch let error as CourierError where error.code == CourierError.notAnImageCode {
        isImage = false
      } catch let error as CourierError where error.kind == .cancelled {
        throw error
      } catch {
        info = nil
      }
    }
    var outcome = CompressionDecision.Outcome.notAttempted
    var compressedURL: URL?
    if isImage && request.compress {
      onState(.compressing)
      let output = temporary.make(extension: "jpg", in: temporaryDirectory)
      do {
        let result = try await compressor.compress(
          input: request.file, output: output, options: request.compression)
        outcome = .compressed(size: result.outputSize)
        compressedURL = output
      } catch {
        let failure = CourierError.wrapping(error, context: request.file.path)
        if failure.kind == .cancelled || Task.isCancelled { throw failure }
        outcome = .failed(failure)
      }
    }
    let verdict = CompressionDecision.decide(
      .init(
        fileName: name, originalSize: originalSize, isImage: isImage,
        originalAcceptable: info.map {
          CompressionDecision.isAcceptableAsIs($0, options: request.compression)
        } ?? false,
        originalHasLocation: info?.hasLocation ?? isImage, noCompress: !request.compress,
        options: request.compression, outcome: outcome, originalLocationChecked: info != nil))
    guard verdict.send == .compressed, let compressedURL, case .compressed(let size) = outcome
    else { return (original, verdict) }
    let base = Self.withoutExtension(name)
    let part = MultipartPart.file(
      "file", filename: (base.isEmpty ? "photo" : base) + ".jpg", contentType: "image/jpeg",
      url: compressedURL, size: size)
    return (part, verdict)
  }

  private var noVerdict: CompressionDecision.Verdict {
    CompressionDecision.Verdict(send: .original, reason: .notAnImage, message: "")
  }

  /// A file name without its last extension, as `NSString.deletingPathExtension` gives it for a
  /// name ("IMG_1.HEIC" is "IMG_1", "a.b.png" is "a.b"; ".profile" and "README" stay as they
  /// are).
  static func withoutExtension(_ name: String) -> String {
    let trimmed = name.hasSuffix("/") ? String(name.dropLast()) : name
    let last = trimmed.lastIndex(of: "/").map { trimmed.index(after: $0) } ?? trimmed.startIndex
    guard let dot = trimmed[last...].lastIndex(of: "."), dot > last,
      trimmed[last..<dot].contains(where: { $0 != "." })
    else { return trimmed }
    return String(trimmed[..<dot])
  }
}
