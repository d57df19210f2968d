#include "CSQLiteShim.h"

// MARK: - libsqlite3 loaded on first use
//
// Every SQLite function the store adapter calls (SQLiteConnection.swift) is defined here as a
// trampoline that loads libsqlite3 with dlopen on its first call and forwards to it, as
// CCurlShim does for libcurl (decision 0504). A binary linked with an AS_NEEDED libsqlite3
// (scripts/release-build) then needs no libsqlite3 at start-up: `courier --version` or `status`
// never map it (decision 1401). In a binary that does link libsqlite3 (debug builds, the
// tests), these definitions take precedence and forward to the same library. None of these
// functions is variadic.

#include <dlfcn.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef COURIER_SQLITE_LINKED

// The release build (scripts/release-build, decision 1405) links libsqlite3.a into the binary
// and compiles this file with COURIER_SQLITE_LINKED: no trampolines then, SQLite's own
// functions are called directly, and the library is always there.
const char *courier_sqlite_load_error(void) { return NULL; }

int courier_sqlite_keep_wal_on_close(sqlite3 *db) {
  return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

// The process-wide settings of courier_sqlite_configure (decision 1410), once, before SQLite
// initialises itself; each is refused (SQLITE_MISUSE) if something in the process already
// started SQLite, which then runs with its defaults.
static pthread_once_t courier_sqlite_configure_once = PTHREAD_ONCE_INIT;
static int courier_sqlite_configure_result = SQLITE_OK;

static void courier_sqlite_configure_now(void) {
  courier_sqlite_configure_result |= sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  courier_sqlite_configure_result |= sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
  courier_sqlite_configure_result |= sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0);
}

int courier_sqlite_configure(void) {
  pthread_once(&courier_sqlite_configure_once, courier_sqlite_configure_now);
  return courier_sqlite_configure_result;
}

#else

static void *courier_sqlite_library;
static char courier_sqlite_error[512];
static pthread_once_t courier_sqlite_once = PTHREAD_ONCE_INIT;

static void courier_sqlite_open(void) {
  // COURIER_LIBSQLITE3 names another file (a path or a soname), as COURIER_LIBVIPS does for
  // libvips: for tests, and for a system where libsqlite3 lives elsewhere.
  const char *override = getenv("COURIER_LIBSQLITE3");
  const char *name = override && override[0] ? override : "libsqlite3.so.0";
  // RTLD_LAZY: the libraries that are not linked with BIND_NOW resolve a function on its
  // first call, not every function of the whole tree now (libcurl and its 28 libraries:
  // 15.5 M instructions with RTLD_NOW, 12.9 M lazily; decision 1401).
  courier_sqlite_library = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
  if (courier_sqlite_library == NULL) {
    const char *reason = dlerror();
    snprintf(courier_sqlite_error, sizeof courier_sqlite_error, "%s",
             reason ? reason : "libsqlite3.so.0 could not be loaded");
  }
}

static void *courier_sqlite_symbol(const char *name) {
  pthread_once(&courier_sqlite_once, courier_sqlite_open);
  if (courier_sqlite_library == NULL) return NULL;
  return dlsym(courier_sqlite_library, name);
}

const char *courier_sqlite_load_error(void) {
  pthread_once(&courier_sqlite_once, courier_sqlite_open);
  return courier_sqlite_library == NULL ? courier_sqlite_error : NULL;
}

// The real function, looked up once (a benign race: every thread stores the same address).
#define COURIER_REAL(name)                                                                  \
  static __typeof__(&name) real_##name;                                                     \
  __typeof__(&name) real = __atomic_load_n(&real_##name, __ATOMIC_ACQUIRE);                 \
  if (real == NULL) {                                                                       \
    real = (__typeof__(&name))courier_sqlite_symbol(#name);                                 \
    __atomic_store_n(&real_##name, real, __ATOMIC_RELEASE);                                 \
  }

#define COURIER_FORWARD(ret, name, fail, params, args)                                      \
  ret name params {                                                                         \
    COURIER_REAL(name)                                                                      \
    return real ? real args : fail;                                                         \
  }

// Without the library every call fails as SQLite fails when it cannot start: SQLITE_CANTOPEN
// for an open (the adapter asks courier_sqlite_load_error() first and names the library),
// SQLITE_MISUSE for anything later, which cannot be reached without an open database.
COURIER_FORWARD(int, sqlite3_open_v2, SQLITE_CANTOPEN,
                (const char *path, sqlite3 **db, int flags, const char *vfs),
                (path, db, flags, vfs))
COURIER_FORWARD(int, sqlite3_close_v2, SQLITE_MISUSE, (sqlite3 * db), (db))
COURIER_FORWARD(sqlite3_vfs *, sqlite3_vfs_find, NULL, (const char *name), (name))
COURIER_FORWARD(int, sqlite3_vfs_register, SQLITE_MISUSE, (sqlite3_vfs * vfs, int make_default),
                (vfs, make_default))
COURIER_FORWARD(const char *, sqlite3_errmsg, "libsqlite3 could not be loaded", (sqlite3 * db),
                (db))
COURIER_FORWARD(int, sqlite3_extended_result_codes, SQLITE_MISUSE, (sqlite3 * db, int onoff),
                (db, onoff))
COURIER_FORWARD(int, sqlite3_busy_timeout, SQLITE_MISUSE, (sqlite3 * db, int ms), (db, ms))
COURIER_FORWARD(int, sqlite3_changes, 0, (sqlite3 * db), (db))
COURIER_FORWARD(int, sqlite3_exec, SQLITE_MISUSE,
                (sqlite3 * db, const char *sql, int (*callback)(void *, int, char **, char **),
                 void *argument, char **error),
                (db, sql, callback, argument, error))
COURIER_FORWARD(int, sqlite3_prepare_v3, SQLITE_MISUSE,
                (sqlite3 * db, const char *sql, int bytes, unsigned int flags,
                 sqlite3_stmt **statement, const char **tail),
                (db, sql, bytes, flags, statement, tail))
COURIER_FORWARD(int, sqlite3_finalize, SQLITE_MISUSE, (sqlite3_stmt * statement), (statement))
COURIER_FORWARD(int, sqlite3_reset, SQLITE_MISUSE, (sqlite3_stmt * statement), (statement))
COURIER_FORWARD(int, sqlite3_clear_bindings, SQLITE_MISUSE, (sqlite3_stmt * statement),
                (statement))
COURIER_FORWARD(int, sqlite3_step, SQLITE_MISUSE, (sqlite3_stmt * statement), (statement))
COURIER_FORWARD(int, sqlite3_bind_null, SQLITE_MISUSE, (sqlite3_stmt * statement, int index),
                (statement, index))
COURIER_FORWARD(int, sqlite3_bind_int64, SQLITE_MISUSE,
                (sqlite3_stmt * statement, int index, sqlite3_int64 value),
                (statement, index, value))
COURIER_FORWARD(int, sqlite3_bind_double, SQLITE_MISUSE,
                (sqlite3_stmt * statement, int index, double value), (statement, index, value))
COURIER_FORWARD(int, sqlite3_bind_text, SQLITE_MISUSE,
                (sqlite3_stmt * statement, int index, const char *text, int bytes,
                 void (*destructor)(void *)),
                (statement, index, text, bytes, destructor))
COURIER_FORWARD(int, sqlite3_column_type, SQLITE_NULL, (sqlite3_stmt * statement, int column),
                (statement, column))
COURIER_FORWARD(sqlite3_int64, sqlite3_column_int64, 0, (sqlite3_stmt * statement, int column),
                (statement, column))
COURIER_FORWARD(double, sqlite3_column_double, 0, (sqlite3_stmt * statement, int column),
                (statement, column))
COURIER_FORWARD(int, sqlite3_column_bytes, 0, (sqlite3_stmt * statement, int column),
                (statement, column))
COURIER_FORWARD(const unsigned char *, sqlite3_column_text, NULL,
                (sqlite3_stmt * statement, int column), (statement, column))

static pthread_once_t courier_sqlite_configure_once = PTHREAD_ONCE_INIT;
static int courier_sqlite_configure_result = SQLITE_OK;

static void courier_sqlite_configure_now(void) {
  // sqlite3_config is variadic: called through its address with the same arguments as the
  // linked build's (decision 1410).
  typedef int (*config_t)(int, ...);
  config_t real = (config_t)courier_sqlite_symbol("sqlite3_config");
  if (real == NULL) {
    courier_sqlite_configure_result = SQLITE_MISUSE;
    return;
  }
  courier_sqlite_configure_result |= real(SQLITE_CONFIG_MEMSTATUS, 0);
  courier_sqlite_configure_result |= real(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
  courier_sqlite_configure_result |= real(SQLITE_CONFIG_LOOKASIDE, 0, 0);
}

int courier_sqlite_configure(void) {
  pthread_once(&courier_sqlite_configure_once, courier_sqlite_configure_now);
  return courier_sqlite_configure_result;
}

int courier_sqlite_keep_wal_on_close(sqlite3 *db) {
  typedef int (*db_config_t)(sqlite3 *, int, ...);
  db_config_t real = (db_config_t)courier_sqlite_symbol("sqlite3_db_config");
  if (real == NULL) return SQLITE_MISUSE;
  return real(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

#endif
