#include "CCurlShim.h"

#include <stdio.h>

#include "CDynamicLibrary.h"

// libcurl through dlopen/dlsym, loaded at the first transfer: a DJ without catalog tracks and the
// commands that fetch nothing (vote, chat, stations, ...) never map libcurl and the ~25 libraries
// it brings (its TLS, Kerberos, LDAP, SSH, RTMP and IDN stacks: about 3.5 MB resident, and their
// start-up). One pointer per function, typed from curl's own declarations (typeof does not
// reference the symbol, so nothing here makes the linker want libcurl).
#define PRCURL_FUNCTIONS(X) \
    X(curl_global_init)     \
    X(curl_easy_init)       \
    X(curl_easy_cleanup)    \
    X(curl_easy_perform)    \
    X(curl_easy_reset)      \
    X(curl_easy_setopt)     \
    X(curl_easy_getinfo)    \
    X(curl_slist_append)    \
    X(curl_slist_free_all)

static struct {
    PRCURL_FUNCTIONS(PRDL_FIELD)
} table;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CURLcode init_result = CURLE_FAILED_INIT;
static char load_error[512];

static void load(void) {
    static const char *const names[] = {PRCURL_FUNCTIONS(PRDL_NAME)};
    if (prdl_open(PRCURL_SONAME, "libcurl", "libcurl4", names, (void **)&table, sizeof names / sizeof *names, NULL,
                  load_error, sizeof load_error) != 0)
        return;
    init_result = table.curl_global_init(CURL_GLOBAL_DEFAULT);
    if (init_result != CURLE_OK) snprintf(load_error, sizeof load_error, "libcurl failed to initialise (curl_global_init: %d)", init_result);
}

CURLcode prcurl_global_init(void) {
    pthread_once(&once, load);
    return init_result;
}

const char *prcurl_load_error(void) {
    prcurl_global_init();
    return load_error;
}

// The wrappers are only called after prcurl_global_init() returned CURLE_OK (the Swift side checks
// it before its first handle), which makes the table complete and visible (pthread_once).
CURL *prcurl_easy_init(void) { return prcurl_global_init() == CURLE_OK ? table.curl_easy_init() : NULL; }
void prcurl_easy_cleanup(CURL *handle) { table.curl_easy_cleanup(handle); }
CURLcode prcurl_easy_perform(CURL *handle) { return table.curl_easy_perform(handle); }
void prcurl_easy_reset(CURL *handle) { table.curl_easy_reset(handle); }
struct curl_slist *prcurl_slist_append(struct curl_slist *list, const char *string) {
    return table.curl_slist_append(list, string);
}
void prcurl_slist_free_all(struct curl_slist *list) { table.curl_slist_free_all(list); }

// Through the table in parentheses: curl's header may make curl_easy_setopt a type-checking macro.

CURLcode prcurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return (table.curl_easy_setopt)(handle, option, value);
}

CURLcode prcurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return (table.curl_easy_setopt)(handle, option, value);
}

CURLcode prcurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return (table.curl_easy_setopt)(handle, option, value);
}

CURLcode prcurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return (table.curl_easy_getinfo)(handle, info, value);
}

CURLcode prcurl_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    return (table.curl_easy_getinfo)(handle, info, value);
}

CURLcode prcurl_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return (table.curl_easy_getinfo)(handle, info, value);
}

size_t prcurl_error_buffer_size(void) {
    return CURL_ERROR_SIZE;
}

CURLcode prcurl_setup_transfer(
    CURL *handle, const char *url, const char *user_agent, struct curl_slist *headers, prcurl_data_callback body,
    prcurl_data_callback header, curl_xferinfo_callback progress, void *context) {
    CURLcode code = CURLE_OK;
#define PRCURL_SET(option, value) \
    if (code == CURLE_OK) code = (table.curl_easy_setopt)(handle, option, value)
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
