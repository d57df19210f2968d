// Courier's VFS: SQLite's "unix" VFS, but a write-ahead log that already exists, and whose
// directory entry is known to be on disk, is opened without SQLITE_OPEN_CREATE (decision 1411).
//
// Why: unixOpen sets UNIXFILE_DIRSYNC on every log opened with SQLITE_OPEN_CREATE (wal.c
// always passes it), whether or not the file was there already, and the first xSync of that
// file then fsyncs its folder: with the log kept between processes (decision 1403), every
// short process (`courier articles add`) paid a second sync for a folder entry made durable
// long before. The folder sync is what makes a new file's name survive a power loss (POSIX:
// fsync of the file alone does not promise its directory entry, and Linux's fsync(2) says so),
// so it may only be left out when an earlier sync of the folder is proven:
//
// - A log that does not exist yet is opened as SQLite opens it (with CREATE): its creator syncs
//   the folder at its first sync, as before.
// - A log that exists is opened without CREATE. If it carries the mark (an extended attribute,
//   user.courier.dirsynced, whose value names this very file: device, inode number and birth
//   time), its folder was synced after this file was linked there, by an earlier process:
//   nothing more to do. Without a valid mark (a creator killed before its first sync, a copy,
//   a file an older build wrote), this VFS syncs the folder itself before the open returns,
//   hence before any commit's sync, and then writes the mark: the mark is only ever written
//   after a sync of the folder returned, so whoever reads it knows the entry is on disk.
// - A file system without user extended attributes or birth times, or any failure along the
//   way: the log is opened exactly as SQLite opens it (one folder sync per process).
//
// Everything but xOpen is the unix VFS's own. Linux only; elsewhere courier_sqlite_vfs()
// returns NULL and the default VFS is used.
#define _GNU_SOURCE
#include "CSQLiteShim.h"

#ifdef __linux__

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define COURIER_VFS_NAME "courier-unix"
#define COURIER_DIRSYNC_MARK "user.courier.dirsynced"

static sqlite3_vfs courier_vfs;
static sqlite3_vfs *courier_unix_vfs;
static pthread_once_t courier_vfs_once = PTHREAD_ONCE_INIT;
static int courier_vfs_registered;
static atomic_long courier_vfs_counts[3];  // kept opens, folder syncs, plain opens

// The mark's value for the file at `path`: "v1 MAJOR:MINOR INODE BIRTH.NANOSECONDS". 0 when the
// file is missing or its file system gives no birth time (the mark could not tell a copy
// from the original then).
static int courier_vfs_identity(const char *path, char *value, size_t size) {
  struct statx info;
  if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_BTIME, &info) != 0) return 0;
  if ((info.stx_mask & (STATX_INO | STATX_BTIME)) != (STATX_INO | STATX_BTIME)) return 0;
  if (!S_ISREG(info.stx_mode)) return 0;
  int length = snprintf(value, size, "v1 %u:%u %llu %lld.%09u", info.stx_dev_major,
                        info.stx_dev_minor, (unsigned long long)info.stx_ino,
                        (long long)info.stx_btime.tv_sec, info.stx_btime.tv_nsec);
  return length > 0 && (size_t)length < size;
}

// fsync of the folder that holds `path` (a full path, as SQLite passes it). 1 when it returned 0.
static int courier_vfs_sync_folder(const char *path) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL) return 0;
  char folder[4096];
  size_t length = slash == path ? 1 : (size_t)(slash - path);
  if (length >= sizeof folder) return 0;
  memcpy(folder, path, length);
  folder[length] = 0;
  int fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  int synced = fsync(fd) == 0;
  close(fd);
  return synced;
}

// Whether the folder entry of the log at `path` is known to be on disk: marked, or made so now
// (the folder synced, then the mark written; a mark that cannot be written only costs the next
// process the same sync).
static int courier_vfs_entry_is_durable(const char *path) {
  char identity[128];
  if (!courier_vfs_identity(path, identity, sizeof identity)) return 0;
  char mark[128];
  ssize_t length = getxattr(path, COURIER_DIRSYNC_MARK, mark, sizeof mark - 1);
  if (length >= 0) {
    mark[length] = 0;
    if (strcmp(mark, identity) == 0) return 1;
  } else if (errno != ENODATA && errno != ERANGE) {
    return 0;  // no user extended attributes here (ENOTSUP) or unreadable: SQLite's own way
  }
  if (!courier_vfs_sync_folder(path)) return 0;
  atomic_fetch_add(&courier_vfs_counts[1], 1);
  (void)setxattr(path, COURIER_DIRSYNC_MARK, identity, strlen(identity), 0);
  return 1;
}

static int courier_vfs_open(sqlite3_vfs *vfs, const char *path, sqlite3_file *file, int flags,
                            int *out_flags) {
  (void)vfs;
  sqlite3_vfs *unix_vfs = courier_unix_vfs;
  int wants_create = (flags & SQLITE_OPEN_WAL) && (flags & SQLITE_OPEN_CREATE) &&
                     (flags & SQLITE_OPEN_READWRITE) && path != NULL && path[0] == '/';
  if (wants_create) {
    // Opened as it is, without creating it: ENOENT (CANTOPEN) when it is not there.
    int rc = unix_vfs->xOpen(unix_vfs, path, file, flags & ~SQLITE_OPEN_CREATE, out_flags);
    if (rc == SQLITE_OK) {
      int read_only = out_flags != NULL && (*out_flags & SQLITE_OPEN_READONLY);
      if (read_only || courier_vfs_entry_is_durable(path)) {
        atomic_fetch_add(&courier_vfs_counts[0], 1);
        return SQLITE_OK;
      }
      // Not proven: closed, and opened again as SQLite opens it (the folder synced at the
      // first sync).
      if (file->pMethods != NULL) file->pMethods->xClose(file);
      file->pMethods = NULL;
    } else if ((rc & 0xff) != SQLITE_CANTOPEN) {
      return rc;
    }
  }
  atomic_fetch_add(&courier_vfs_counts[2], 1);
  return unix_vfs->xOpen(unix_vfs, path, file, flags, out_flags);
}

static void courier_vfs_register(void) {
  courier_unix_vfs = sqlite3_vfs_find("unix");
  if (courier_unix_vfs == NULL || courier_unix_vfs->iVersion < 1) return;
  courier_vfs = *courier_unix_vfs;
  courier_vfs.pNext = NULL;
  courier_vfs.zName = COURIER_VFS_NAME;
  courier_vfs.xOpen = courier_vfs_open;
  courier_vfs_registered = sqlite3_vfs_register(&courier_vfs, 0) == SQLITE_OK;
}

const char *courier_sqlite_vfs(void) {
  pthread_once(&courier_vfs_once, courier_vfs_register);
  return courier_vfs_registered ? COURIER_VFS_NAME : NULL;
}

long courier_sqlite_vfs_count(int which) {
  if (which < 0 || which > 2) return -1;
  return atomic_load(&courier_vfs_counts[which]);
}

#else

const char *courier_sqlite_vfs(void) { return NULL; }

long courier_sqlite_vfs_count(int which) {
  (void)which;
  return -1;
}

#endif
