/// How `FileQueuedUploadStore.markDelivered(_:)` removes a delivered queued upload's kept
/// bytes once the server's proof is written (decision 1303 §3). The proof always comes first;
/// this only says who frees the bytes' blocks: a library's session removes them in its own
/// process, and the `courier` command chooses a detached remover.
package enum DeliveredBodyRemoval: Sendable, Equatable {
  /// Unlinked in this process, before `markDelivered` returns: no child process, no thread.
  /// The default of the library: an app embedding Courier never sees a process it did not
  /// start. Freeing a gigabyte's blocks costs the caller about a quarter of a second.
  case inProcess
  /// Renamed `<id>.sent` at once, then unlinked by a short-lived grandchild process (forked
  /// twice, adopted and reaped by init) so that the file system frees the blocks beside the
  /// caller. For a short-lived command that owns its process, such as `courier`: it forks, so
  /// an app that counts its children, or cannot have a fork made behind its back, must keep
  /// ``inProcess``. Where no child can be made, the bytes are unlinked in this process; a
  /// remover that never ran leaves `<id>.sent` for the next sweep.
  case detachedProcess
}
