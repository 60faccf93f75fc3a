#include "CCurlShim.h"

CURLcode prcurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode prcurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode prcurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode prcurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *list) {
    return curl_easy_setopt(handle, option, list);
}

CURLcode prcurl_setopt_data_callback(CURL *handle, CURLoption option, prcurl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode prcurl_setopt_xferinfo_callback(CURL *handle, curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

CURLcode prcurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode prcurl_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode prcurl_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}

size_t prcurl_error_buffer_size(void) {
    return CURL_ERROR_SIZE;
}

CURLcode prcurl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

CURLcode prcurl_setup_transfer(
    CURL *handle, const char *url, const char *user_agent, struct curl_slist *headers, prcurl_data_callback body,
    prcurl_data_callback header, curl_xferinfo_callback progress, void *context) {
    CURLcode code = CURLE_OK;
#define PRCURL_SET(option, value) \
    if (code == CURLE_OK) code = curl_easy_setopt(handle, option, value)
    PRCURL_SET(CURLOPT_URL, url);
    PRCURL_SET(CURLOPT_USERAGENT, user_agent);
    PRCURL_SET(CURLOPT_PROTOCOLS_STR, "http,https");
    PRCURL_SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    PRCURL_SET(CURLOPT_FOLLOWLOCATION, 1L);
    PRCURL_SET(CURLOPT_MAXREDIRS, 5L);
    PRCURL_SET(CURLOPT_NOSIGNAL, 1L);  // no SIGALRM in a threaded process
    PRCURL_SET(CURLOPT_HTTPHEADER, headers);
    PRCURL_SET(CURLOPT_WRITEFUNCTION, body);
    PRCURL_SET(CURLOPT_WRITEDATA, context);
    PRCURL_SET(CURLOPT_HEADERFUNCTION, header);
    PRCURL_SET(CURLOPT_HEADERDATA, context);
    PRCURL_SET(CURLOPT_NOPROGRESS, 0L);  // turns the progress callback on
    PRCURL_SET(CURLOPT_XFERINFOFUNCTION, progress);
    PRCURL_SET(CURLOPT_XFERINFODATA, context);
#undef PRCURL_SET
    return code;
}
