import Synchronization

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

/// Names Courier's temporary files after the process that made them, so that a later run can
/// remove what a killed process left (a compressed copy, a multipart body as large as the
/// photo). A file is removed by `sweep` only when its owner is gone: an upload running in
/// another process keeps its files.
package enum CourierTemporaryFile {
  /// The kinds of temporary file, each a name prefix.
  static let kinds = ["courier-upload-", "courier-multipart-"]

  /// A new name: `<kind><pid>-<uuid>.<ext>` in `directory`.
  /// - Parameters:
  ///   - kind: one of `kinds`.
  ///   - ext: the extension.
  ///   - directory: the folder.
  /// - Returns: the URL.
  static func make(_ kind: String, ext: String, in directory: URL) -> URL {
    directory.appendingPathComponent("\(kind)\(getpid())-\(UUID().uuidString).\(ext)")
  }

  /// The process that made a file, from its name.
  /// - Parameter name: a file name.
  /// - Returns: the owner's pid, or nil for a name not made by `make`.
  package static func owner(ofFileNamed name: String) -> pid_t? {
    guard let kind = kinds.first(where: { name.hasPrefix($0) }) else { return nil }
    let rest = name.dropFirst(kind.count)
    guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 else {
      return nil
    }
    // The rest must be a UUID and an extension, as `make` writes it.
    let tail = rest[rest.index(after: dash)...]
    guard let dot = tail.firstIndex(of: "."), UUID(uuidString: String(tail[..<dot])) != nil
    else { return nil }
    return pid
  }

  /// Whether a process exists (a permission error means it does).
  /// - Parameter pid: the process.
  /// - Returns: true when it is running.
  package static func isRunning(_ pid: pid_t) -> Bool {
    kill(pid, 0) == 0 || errno == EPERM
  }

  /// Folders already swept by this process: what is left there by a dead process does not
  /// come back, so one sweep per folder per process is enough.
  private static let swept = Mutex<Set<String>>([])

  /// Sweeps a folder the first time this process asks, not on every upload.
  /// - Parameter directory: the folder.
  static func sweepOnce(_ directory: URL) {
    let first = swept.withLock { $0.insert(directory.standardizedFileURL.path).inserted }
    if first { sweep(directory) }
  }

  /// The names in a folder that start with `courier-`, read with `readdir`: the folder is
  /// usually the system's temporary folder, shared with every other program, and
  /// `FileManager.contentsOfDirectory` made a `String` of each of its names (4,300 here, 8 M
  /// instructions of a 1 MiB upload, issue 14) where one comparison of bytes rules most out.
  static func courierNames(in path: String) -> [String] {
    guard let folder = opendir(path) else { return [] }
    defer { closedir(folder) }
    let prefix = Array("courier-".utf8)
    var names: [String] = []
    while let entry = readdir(folder) {
      let name: String? = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
        let bytes = raw.bindMemory(to: UInt8.self)
        guard bytes.count > prefix.count, bytes.starts(with: prefix) else { return nil }
        let length = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<length]), as: UTF8.self)
      }
      if let name { names.append(name) }
    }
    return names
  }

  /// Removes the temporary files of processes that are gone.
  /// - Parameters:
  ///   - directory: the folder to look in.
  ///   - isRunning: whether a pid is alive (the system's answer by default).
  /// - Returns: the files removed.
  @discardableResult
  package static func sweep(
    _ directory: URL, isRunning: (pid_t) -> Bool = CourierTemporaryFile.isRunning
  ) -> [URL] {
    var removed: [URL] = []
    for name in courierNames(in: directory.path) {
      guard let pid = owner(ofFileNamed: name), pid != getpid(), !isRunning(pid) else { continue }
      let url = directory.appendingPathComponent(name)
      if (try? FileManager.default.removeItem(at: url)) != nil { removed.append(url) }
    }
    return removed
  }
}
