import CourierCore
import CourierDomain
import CourierPorts
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Another process is syncing this data folder: the writes are saved, and it sends them.
public struct SyncInProgressError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Who holds the lock.
  package var holder: SyncLock.Holder
  /// The data folder.
  package var dataDirectory: URL

  /// Creates the error.
  /// - Parameters:
  ///   - holder: who holds the lock.
  ///   - dataDirectory: the data folder.
  package init(holder: SyncLock.Holder, dataDirectory: URL) {
    self.holder = holder
    self.dataDirectory = dataDirectory
  }

  /// "another courier (pid 12, running sync --watch) is syncing this data folder (…)".
  public var description: String {
    "\(holder.description) is syncing this data folder (\(dataDirectory.path))"
  }
}
