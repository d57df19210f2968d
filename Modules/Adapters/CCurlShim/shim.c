#define _GNU_SOURCE
#include <fcntl.h>

#include "CCurlShim.h"

CURLcode courier_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_ALL); }

CURLcode courier_curl_setopt_long(CURL *handle, CURLoption option, long value) {
  return curl_easy_setopt(handle, option, value);
}
CURLcode courier_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
  return curl_easy_setopt(handle, option, value);
}
CURLcode courier_curl_setopt_ptr(CURL *handle, CURLoption option, const void *value) {
  return curl_easy_setopt(handle, option, value);
}
CURLcode courier_curl_setopt_read(CURL *handle, curl_read_callback callback) {
  return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}
CURLcode courier_curl_setopt_seek(CURL *handle, curl_seek_callback callback) {
  return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, callback);
}
CURLcode courier_curl_setopt_write(CURL *handle, curl_write_callback callback) {
  return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}
CURLcode courier_curl_setopt_header(CURL *handle, curl_write_callback callback) {
  return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}
CURLcode courier_curl_setopt_xferinfo(CURL *handle, curl_xferinfo_callback callback) {
  return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

CURLcode courier_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
  return curl_easy_getinfo(handle, info, value);
}
CURLcode courier_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
  return curl_easy_getinfo(handle, info, value);
}
CURLcode courier_curl_getinfo_ptr(CURL *handle, CURLINFO info, void **value) {
  return curl_easy_getinfo(handle, info, value);
}

CURLMcode courier_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
  return curl_multi_setopt(multi, option, value);
}

int courier_curl_msg_is_done(const CURLMsg *message) { return message->msg == CURLMSG_DONE; }
CURLcode courier_curl_msg_result(const CURLMsg *message) { return message->data.result; }

const size_t courier_curl_readfunc_abort = CURL_READFUNC_ABORT;
const int courier_curl_seekfunc_cantseek = CURL_SEEKFUNC_CANTSEEK;
const size_t courier_curl_writefunc_error = CURL_WRITEFUNC_ERROR;

// MARK: - libcurl loaded on first use
//
// Every libcurl function Courier calls, and every one the static FoundationNetworking calls
// (URLSession's backend, `nm -u lib_CFURLSessionInterface.a`), is defined here as a trampoline
// that loads libcurl with dlopen on its first call and forwards to it. A binary linked with
// `--as-needed` (scripts/install, Benchmarks/cli) then needs no libcurl at start-up: `courier
// --version` or `articles list --offline` never map it and the 28 libraries it pulls in
// (decision 0504). In a binary that does link libcurl, these definitions take precedence and
// forward to the same library. The variadic setopt/getinfo calls forward their one argument
// as a 64-bit value: every libcurl option is a long, a curl_off_t or a pointer, all passed in
// the same integer registers on the System V ABIs Courier runs on.

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static void *courier_curl_library;
static char courier_curl_error[512];
static pthread_once_t courier_curl_once = PTHREAD_ONCE_INIT;

static void courier_curl_open(void) {
  // RTLD_LAZY: the libraries that are not linked with BIND_NOW resolve a function on its
  // first call, not every function of the whole tree now (libcurl and its 28 libraries:
  // 15.5 M instructions with RTLD_NOW, 12.9 M lazily; decision 1401).
  courier_curl_library = dlopen("libcurl.so.4", RTLD_LAZY | RTLD_LOCAL);
  if (courier_curl_library == NULL) {
    const char *reason = dlerror();
    snprintf(courier_curl_error, sizeof courier_curl_error, "%s",
             reason ? reason : "libcurl.so.4 could not be loaded");
  }
}

static void *courier_curl_symbol(const char *name) {
  pthread_once(&courier_curl_once, courier_curl_open);
  if (courier_curl_library == NULL) return NULL;
  return dlsym(courier_curl_library, name);
}

const char *courier_curl_load_error(void) {
  pthread_once(&courier_curl_once, courier_curl_open);
  return courier_curl_library == NULL ? courier_curl_error : NULL;
}

// The real function, looked up once (a benign race: every thread stores the same address).
#define COURIER_REAL(name)                                                                  \
  static __typeof__(&name) real_##name;                                                     \
  __typeof__(&name) real = __atomic_load_n(&real_##name, __ATOMIC_ACQUIRE);                 \
  if (real == NULL) {                                                                       \
    real = (__typeof__(&name))courier_curl_symbol(#name);                                   \
    __atomic_store_n(&real_##name, real, __ATOMIC_RELEASE);                                 \
  }

#define COURIER_FORWARD(ret, name, fail, params, args)                                      \
  ret name params {                                                                         \
    COURIER_REAL(name)                                                                      \
    return real ? real args : fail;                                                         \
  }
#define COURIER_FORWARD_VOID(name, params, args)                                            \
  void name params {                                                                        \
    COURIER_REAL(name)                                                                      \
    if (real) real args;                                                                    \
  }
#define COURIER_FORWARD_VARIADIC(ret, name, fail, handle_t, option_t)                      \
  ret name(handle_t handle, option_t option, ...) {                                         \
    COURIER_REAL(name)                                                                      \
    if (real == NULL) return fail;                                                          \
    va_list list;                                                                           \
    va_start(list, option);                                                                 \
    void *value = va_arg(list, void *);                                                     \
    va_end(list);                                                                           \
    return real(handle, option, value);                                                     \
  }

COURIER_FORWARD(CURLcode, curl_global_init, CURLE_FAILED_INIT, (long flags), (flags))
COURIER_FORWARD(CURL *, curl_easy_init, NULL, (void), ())
COURIER_FORWARD_VOID(curl_easy_cleanup, (CURL *handle), (handle))
COURIER_FORWARD_VARIADIC(CURLcode, curl_easy_setopt, CURLE_FAILED_INIT, CURL *, CURLoption)
COURIER_FORWARD_VARIADIC(CURLcode, curl_easy_getinfo, CURLE_FAILED_INIT, CURL *, CURLINFO)
COURIER_FORWARD(CURLcode, curl_easy_pause, CURLE_FAILED_INIT, (CURL *handle, int bitmask),
                (handle, bitmask))
COURIER_FORWARD(const char *, curl_easy_strerror, "libcurl could not be loaded",
                (CURLcode code), (code))
COURIER_FORWARD_VOID(curl_free, (void *pointer), (pointer))
COURIER_FORWARD(struct curl_slist *, curl_slist_append, NULL,
                (struct curl_slist *list, const char *string), (list, string))
COURIER_FORWARD_VOID(curl_slist_free_all, (struct curl_slist *list), (list))
COURIER_FORWARD(char *, curl_version, NULL, (void), ())
COURIER_FORWARD(curl_version_info_data *, curl_version_info, NULL, (CURLversion age), (age))
COURIER_FORWARD(CURLM *, curl_multi_init, NULL, (void), ())
COURIER_FORWARD(CURLMcode, curl_multi_cleanup, CURLM_INTERNAL_ERROR, (CURLM *multi), (multi))
COURIER_FORWARD(CURLMcode, curl_multi_add_handle, CURLM_INTERNAL_ERROR,
                (CURLM *multi, CURL *handle), (multi, handle))
COURIER_FORWARD(CURLMcode, curl_multi_remove_handle, CURLM_INTERNAL_ERROR,
                (CURLM *multi, CURL *handle), (multi, handle))
COURIER_FORWARD_VARIADIC(CURLMcode, curl_multi_setopt, CURLM_INTERNAL_ERROR, CURLM *,
                         CURLMoption)
COURIER_FORWARD(CURLMcode, curl_multi_assign, CURLM_INTERNAL_ERROR,
                (CURLM *multi, curl_socket_t socket, void *pointer), (multi, socket, pointer))
COURIER_FORWARD(CURLMcode, curl_multi_socket_action, CURLM_INTERNAL_ERROR,
                (CURLM *multi, curl_socket_t socket, int events, int *running),
                (multi, socket, events, running))
COURIER_FORWARD(CURLMcode, curl_multi_perform, CURLM_INTERNAL_ERROR,
                (CURLM *multi, int *running), (multi, running))
COURIER_FORWARD(CURLMcode, curl_multi_poll, CURLM_INTERNAL_ERROR,
                (CURLM *multi, struct curl_waitfd extra[], unsigned int count, int timeout,
                 int *ready),
                (multi, extra, count, timeout, ready))
COURIER_FORWARD(CURLMcode, curl_multi_wakeup, CURLM_INTERNAL_ERROR, (CURLM *multi), (multi))
COURIER_FORWARD(CURLMsg *, curl_multi_info_read, NULL, (CURLM *multi, int *queued),
                (multi, queued))
COURIER_FORWARD(CURLU *, curl_url, NULL, (void), ())
COURIER_FORWARD_VOID(curl_url_cleanup, (CURLU *url), (url))
COURIER_FORWARD(CURLUcode, curl_url_get, CURLUE_OUT_OF_MEMORY,
                (CURLU *url, CURLUPart part, char **value, unsigned int flags),
                (url, part, value, flags))
COURIER_FORWARD(CURLUcode, curl_url_set, CURLUE_OUT_OF_MEMORY,
                (CURLU *url, CURLUPart part, const char *value, unsigned int flags),
                (url, part, value, flags))


int courier_start_writeback(int fd, long long offset, long long length) {
#ifdef SYNC_FILE_RANGE_WRITE
  return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
  (void)fd; (void)offset; (void)length;
  return 0;
#endif
}
