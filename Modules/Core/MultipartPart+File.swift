import CourierDomain
import CourierPorts
import CourierSystem

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension MultipartPart {
  /// A file part for a file on disk: its size is read now, its media type sniffed from its
  /// first bytes (then its extension) unless given. The content itself is read only when the
  /// body is written.
  /// - Parameters:
  ///   - name: the field name.
  ///   - url: the file.
  ///   - filename: the filename to send (the file's own name by default).
  ///   - contentType: the media type; detected when nil.
  /// - Returns: the part.
  /// - Throws: `CourierError` `fileUnavailable` naming the file when it is missing, not a
  ///   regular file or unreadable.
  package static func file(
    _ name: String, at url: URL, filename: String? = nil, contentType: String? = nil
  ) throws -> MultipartPart {
    func unavailable(_ why: String, _ error: (any Error)? = nil) -> CourierError {
      CourierError(
        .fileUnavailable, code: "file_unavailable",
        serverMessage: "The file \(url.lastPathComponent) for field \"\(name)\" \(why).",
        field: name, underlying: error.map { String(describing: $0) }, context: url.path)
    }
    // Only a regular file: a FIFO would block the open, a device would be sent as empty or
    // never end. Checked before opening, and the open itself cannot block.
    let handle: OpenFile
    do {
      handle = try RegularFile.openForReading(atPath: url.path)
    } catch let problem as RegularFile.Problem {
      throw unavailable(problem.why)
    } catch {
      throw unavailable("couldn't be opened", error)
    }
    do {
      let prefix = try handle.read(upToCount: MultipartMediaType.sniffLength)
      let size = Int64(try handle.seekToEnd())
      let sentName = filename ?? url.lastPathComponent
      let type = contentType ?? MultipartMediaType.detect(prefix: prefix, filename: sentName)
      return .file(name, filename: sentName, contentType: type, url: url, size: size)
    } catch {
      throw unavailable("couldn't be read", error)
    }
  }
}
