// The system's libcurl (Debian: libcurl4-openssl-dev), imported as is.
#include <curl/curl.h>
