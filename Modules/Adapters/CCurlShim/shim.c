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
