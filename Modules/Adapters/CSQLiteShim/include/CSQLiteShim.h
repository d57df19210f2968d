// libsqlite3 loaded with dlopen on first use (decision 1401): the SQLite functions the store
// adapter calls are defined in shim.c as trampolines, so a binary linked with an AS_NEEDED
// libsqlite3 maps no libsqlite3 until a command opens a store. The release build links
// libsqlite3.a instead and compiles shim.c without them (COURIER_SQLITE_LINKED, decision 1405).
#ifndef COURIER_SQLITE_SHIM_H
#define COURIER_SQLITE_SHIM_H

#include <sqlite3.h>

/// Why libsqlite3 could not be loaded (dlopen of libsqlite3.so.0 on first use), or NULL once
/// it is (always NULL when SQLite is linked in).
const char *courier_sqlite_load_error(void);

/// Leaves the write-ahead log in place when the connection closes
/// (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE): no checkpoint and no deletion at close, so the next
/// process appends to the same log and a commit costs one fdatasync (decision 1403). Wraps
/// sqlite3_db_config, which is variadic. Returns SQLite's result code.
int courier_sqlite_keep_wal_on_close(sqlite3 *db);

/// Sets SQLite's process-wide memory settings once, before SQLite starts (decision 1410): no
/// memory statistics (a mutex and counters around every allocation), no page cache allocated
/// in bulk ahead of use, no lookaside buffer per connection (each initialised in full at
/// open). A short command then writes to fewer fresh pages. Call before the first open; a
/// setting SQLite refuses because it already started is left at its default. Returns 0 when
/// all three were taken, an SQLite error code otherwise.
int courier_sqlite_configure(void);

/// The name of Courier's VFS (vfs.c, decision 1411), registered on the first call: SQLite's
/// "unix" VFS, except that a write-ahead log that exists already is opened without
/// SQLITE_OPEN_CREATE once its folder entry is known to be on disk (an extended attribute on
/// the log says so, written only after a sync of the folder), so that a short process's
/// commit is its one sync, not that and a sync of the folder. NULL where it is not available
/// (not Linux, no "unix" VFS): open with the default VFS then. Call after
/// courier_sqlite_configure(), which must come before anything starts SQLite.
const char *courier_sqlite_vfs(void);

/// What Courier's VFS did in this process, for tests: 0, logs opened without
/// SQLITE_OPEN_CREATE (kept); 1, folders it synced itself before marking a log; 2, files opened
/// as SQLite opens them. -1 for another `which`, or without the VFS.
long courier_sqlite_vfs_count(int which);

#endif
