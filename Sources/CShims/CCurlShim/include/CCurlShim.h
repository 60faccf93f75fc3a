// Typed wrappers for libcurl's variadic entry points, which Swift cannot call directly.
// One wrapper per argument type; each says which C type curl expects, so Swift passes exactly that.
#ifndef PARTYRADIO_CCURLSHIM_H
#define PARTYRADIO_CCURLSHIM_H

#include <curl/curl.h>

/// The write/header callback type curl expects (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION).
typedef size_t (*prcurl_data_callback)(char *data, size_t size, size_t count, void *context);

/// curl_easy_setopt is variadic; options of type `long` (timeouts, flags) go through here.
CURLcode prcurl_setopt_long(CURL *handle, CURLoption option, long value);

/// curl_easy_setopt is variadic; options taking a NUL-terminated string (curl copies it) go through here.
CURLcode prcurl_setopt_string(CURL *handle, CURLoption option, const char *value);

/// curl_easy_setopt is variadic; options taking an opaque pointer (WRITEDATA, HEADERDATA, ERRORBUFFER).
CURLcode prcurl_setopt_pointer(CURL *handle, CURLoption option, void *value);

/// The options every transfer of ours shares, set in one place: `url`, `user_agent`, http and https
/// only (also after a redirect, at most 5 redirects), no signals, the `headers` list, and the body,
/// header and progress callbacks, each called with `context`. Returns the first option that failed.
CURLcode prcurl_setup_transfer(
    CURL *handle, const char *url, const char *user_agent, struct curl_slist *headers, prcurl_data_callback body,
    prcurl_data_callback header, curl_xferinfo_callback progress, void *context);

/// curl_easy_getinfo is variadic; CURLINFO_LONG values (response code, redirect count).
CURLcode prcurl_getinfo_long(CURL *handle, CURLINFO info, long *value);

/// curl_easy_getinfo is variadic; CURLINFO_STRING values (effective URL, content type), owned by curl.
CURLcode prcurl_getinfo_string(CURL *handle, CURLINFO info, const char **value);

/// curl_easy_getinfo is variadic; CURLINFO_DOUBLE values (total time in seconds).
CURLcode prcurl_getinfo_double(CURL *handle, CURLINFO info, double *value);

/// CURL_ERROR_SIZE is a macro; the error buffer passed with CURLOPT_ERRORBUFFER must be this large.
size_t prcurl_error_buffer_size(void);

/// CURL_GLOBAL_DEFAULT is a macro expression Swift does not import; initialises libcurl once per process.
/// libcurl's soname (Debian 12: libcurl4); it is loaded with dlopen, not linked.
#define PRCURL_SONAME "libcurl.so.4"

/// Loads libcurl (once per process) and runs curl_global_init: CURLE_OK, or CURLE_FAILED_INIT
/// with the reason in prcurl_load_error(). Thread-safe; every other function needs it to succeed.
CURLcode prcurl_global_init(void);

/// Why libcurl is not usable, one sentence with the fix ("" when it is).
const char *prcurl_load_error(void);

CURL *prcurl_easy_init(void);
void prcurl_easy_cleanup(CURL *handle);
CURLcode prcurl_easy_perform(CURL *handle);
void prcurl_easy_reset(CURL *handle);
struct curl_slist *prcurl_slist_append(struct curl_slist *list, const char *string);
void prcurl_slist_free_all(struct curl_slist *list);

#endif
