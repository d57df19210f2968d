// Fixed-signature wrappers over libcurl's variadic calls (curl_easy_setopt, curl_easy_getinfo,
// curl_multi_setopt), which Swift cannot call, and over the few macros and unions it cannot
// import. One wrapper per argument type; callbacks get typed setters so a wrong function type
// fails to compile instead of crashing at run time.
#ifndef COURIER_CURL_SHIM_H
#define COURIER_CURL_SHIM_H

#include <curl/curl.h>

/// Why libcurl could not be loaded (dlopen of libcurl.so.4 on first use), or NULL once it is.
const char *courier_curl_load_error(void);

/// curl_global_init(CURL_GLOBAL_ALL); thread-safe in libcurl >= 7.84 built "threadsafe".
CURLcode courier_curl_global_init(void);

CURLcode courier_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode courier_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
CURLcode courier_curl_setopt_ptr(CURL *handle, CURLoption option, const void *value);
CURLcode courier_curl_setopt_read(CURL *handle, curl_read_callback callback);
CURLcode courier_curl_setopt_seek(CURL *handle, curl_seek_callback callback);
CURLcode courier_curl_setopt_write(CURL *handle, curl_write_callback callback);
CURLcode courier_curl_setopt_header(CURL *handle, curl_write_callback callback);
CURLcode courier_curl_setopt_xferinfo(CURL *handle, curl_xferinfo_callback callback);

CURLcode courier_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode courier_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode courier_curl_getinfo_ptr(CURL *handle, CURLINFO info, void **value);

CURLMcode courier_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// Whether a message from curl_multi_info_read says a transfer is done.
int courier_curl_msg_is_done(const CURLMsg *message);
/// The transfer's result carried by a CURLMSG_DONE message (a union member in C).
CURLcode courier_curl_msg_result(const CURLMsg *message);

/// Aborts a transfer from a read callback.
extern const size_t courier_curl_readfunc_abort;
/// Tells libcurl that a seek callback failed and rewinding is impossible.
extern const int courier_curl_seekfunc_cantseek;
/// Tells libcurl to abort from a write callback (returning fewer bytes than offered also works).
extern const size_t courier_curl_writefunc_error;

/// Asks the kernel to start writing a range of a file to the disk, without waiting for it
/// (`sync_file_range` with `SYNC_FILE_RANGE_WRITE` on Linux; nothing elsewhere). Returns 0 or -1.
int courier_start_writeback(int fd, long long offset, long long length);

#endif
