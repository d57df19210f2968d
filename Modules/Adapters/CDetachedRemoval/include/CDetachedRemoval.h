// The detached remover of a delivered queued upload's bytes (decision 1303 §3), an opt-in of
// FileQueuedUploadStore (`DeliveredBodyRemoval.detachedProcess`, chosen by the `courier`
// command, never a library default). In C so that what runs between fork and _exit is known
// to be async-signal-safe: no Swift runtime, no allocation, no lock.
#ifndef COURIER_DETACHED_REMOVAL_H
#define COURIER_DETACHED_REMOVAL_H

/// Unlinks `path` in a grandchild process (`_Fork` twice; the child exits at once and is
/// reaped here, init adopts and reaps the grandchild), which first closes every descriptor
/// from 0 to `highest`. All signals are blocked in the calling thread around the forks, so
/// neither process runs an inherited handler; no `pthread_atfork` handler runs. Returns 0 when
/// the child was made (the unlink itself is not waited for), -1 when it could not be (no
/// `_Fork` on this C library, or the fork failed): the caller then unlinks it itself.
int courier_unlink_detached(const char *path, int highest);

#endif
