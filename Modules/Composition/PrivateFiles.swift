import CourierCore
import CourierCurl
import CourierDomain
import CourierFileStore
import CourierMemory
import CourierNetlink
import CourierPorts
import CourierSQLite
import CourierSystem
import CourierVips
import Synchronization

#if URLSessionTransport
  import CourierURLSession
#endif
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

/// The data directory and the files in it are private to their owner (decision 0405).
@usableFromInline package enum PrivateFiles {
  /// Writes a warning to the process's standard error.
  /// - Parameter message: the sentence.
  @usableFromInline package static func warnOnStandardError(_ message: String) {
    OpenFile.writeAll("courier: warning: \(message)\n", to: STDERR_FILENO)
  }

  /// Creates a directory (and its missing parents) with mode 0700, or tightens an existing one
  /// that group or others may use, with a warning.
  /// - Parameters:
  ///   - path: the directory.
  ///   - warn: receives a sentence when the mode was tightened.
  /// - Throws: `StoreError.cannotCreate` naming the path when a part of it is a file or it
  ///   cannot be created.
  package static func prepareDirectory(_ path: String, warn: (String) -> Void) throws {
    // The folder as it usually is, there already: one `stat`, not one for each part of the
    // path (issue 14). Otherwise each part is looked at, and the missing ones made.
    var existing = stat()
    if stat(path, &existing) == 0, (existing.st_mode & S_IFMT) == S_IFDIR {
      if (existing.st_mode & 0o077) != 0 { makePrivate(path, mode: existing.st_mode, warn: warn) }
      return
    }
    var prefix = path.hasPrefix("/") ? "" : "."
    let parts = path.split(separator: "/", omittingEmptySubsequences: true)
    for (index, part) in parts.enumerated() {
      // Appended as two Strings: `"/" + part` is the generic append of a Substring, whose
      // witness lookup scanned every conformance record of the binary (a twentieth of an
      // offline `courier articles add`, issue 14).
      prefix += "/"
      prefix += String(part)
      let isLast = index == parts.count - 1
      var info = stat()
      if stat(prefix, &info) == 0 {
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
          throw StoreError(
            .cannotCreate,
            "The data folder \(path) cannot be created: \(prefix) is a file, not a folder.",
            path: prefix)
        }
        if isLast && (info.st_mode & 0o077) != 0 {
          makePrivate(prefix, mode: info.st_mode, warn: warn)
        }
        continue
      }
      if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
        let code = errno
        throw StoreError(
          code == ENOSPC || code == EIO ? .io : .cannotCreate,
          "The data folder \(path) could not be created (\(prefix)).", path: prefix,
          underlying: String(cString: strerror(code)))
      }
      if isLast { _ = chmod(prefix, 0o700) }  // whatever the umask
    }
  }

  /// Tightens a data folder that group or others may use to 0700, with a warning either way.
  private static func makePrivate(_ path: String, mode: mode_t, warn: (String) -> Void) {
    if chmod(path, 0o700) == 0 {
      warn(
        "the data folder \(path) could be read by other users (mode "
          + String(mode & 0o777, radix: 8) + "); it was made private (0700).")
    } else {
      warn(
        "the data folder \(path) can be read by other users (mode "
          + String(mode & 0o777, radix: 8) + ") and could not be made private: "
          + String(cString: strerror(errno)) + ".")
    }
  }
}
