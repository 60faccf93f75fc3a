// See include/CMpvLoader.h: libmpv through dlopen/dlsym.
#include "CMpvLoader.h"

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

// One pointer per mpv function, typed from mpv's own declarations (typeof does not reference the
// symbol, so nothing here makes the linker want libmpv).
#define PRMPV_FUNCTIONS(X)                                                                         \
    X(mpv_client_api_version)                                                                      \
    X(mpv_error_string)                                                                            \
    X(mpv_free)                                                                                    \
    X(mpv_create)                                                                                  \
    X(mpv_initialize)                                                                              \
    X(mpv_terminate_destroy)                                                                       \
    X(mpv_set_option_string)                                                                       \
    X(mpv_command)                                                                                 \
    X(mpv_set_property)                                                                            \
    X(mpv_get_property)                                                                            \
    X(mpv_get_property_string)                                                                     \
    X(mpv_wait_event)                                                                              \
    X(mpv_set_wakeup_callback)                                                                     \
    X(mpv_stream_cb_add_ro)

struct prmpv_table {
#define PRMPV_FIELD(name) __typeof__(name) *name;
    PRMPV_FUNCTIONS(PRMPV_FIELD)
#undef PRMPV_FIELD
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct prmpv_table table;
// Set (release) once `table` is complete; the wrappers read it (acquire) before the table.
static int loaded;

static void set_error(char *error, size_t length, const char *what, const char *detail) {
    if (error == NULL || length == 0) return;
    snprintf(error, length, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
}

int prmpv_load(const char *soname, char *error, size_t length) {
    if (soname == NULL) soname = PRMPV_SONAME;
    pthread_mutex_lock(&lock);
    int already = __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
    if (already && strcmp(soname, PRMPV_SONAME) == 0) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    dlerror();
    // LOCAL: mpv's symbols stay out of the global namespace. LAZY, as when it was linked: nothing
    // is bound before it is called; the functions partyradio calls are checked below with dlsym.
    void *library = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    if (library == NULL) {
        set_error(error, length, dlerror(), NULL);
        pthread_mutex_unlock(&lock);
        return -1;
    }
    struct prmpv_table found;
#define PRMPV_RESOLVE(name)                                                                        \
    found.name = (__typeof__(name) *)dlsym(library, #name);                                       \
    if (found.name == NULL) {                                                                      \
        set_error(error, length, "missing " #name, dlerror());                                     \
        dlclose(library);                                                                          \
        pthread_mutex_unlock(&lock);                                                               \
        return -1;                                                                                 \
    }
    PRMPV_FUNCTIONS(PRMPV_RESOLVE)
#undef PRMPV_RESOLVE
    if (already) {
        // Another name that loads too; the library in use stays (its handles must keep working).
        dlclose(library);
    } else {
        // Never closed: mpv's threads and handles outlive any one player.
        table = found;
        __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

int prmpv_is_loaded(void) { return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE); }

int prmpv_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

static const struct prmpv_table *api(void) {
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE) ? &table : NULL;
}

unsigned long prmpv_client_api_version(void) { return api()->mpv_client_api_version(); }

const char *prmpv_error_string(int error) {
    const struct prmpv_table *t = api();
    return t ? t->mpv_error_string(error) : "libmpv is not loaded";
}

void prmpv_free(void *data) { api()->mpv_free(data); }
mpv_handle *prmpv_create(void) { return api()->mpv_create(); }
int prmpv_initialize(mpv_handle *ctx) { return api()->mpv_initialize(ctx); }
void prmpv_terminate_destroy(mpv_handle *ctx) { api()->mpv_terminate_destroy(ctx); }

int prmpv_set_option_string(mpv_handle *ctx, const char *name, const char *data) {
    return api()->mpv_set_option_string(ctx, name, data);
}

int prmpv_command(mpv_handle *ctx, const char **args) { return api()->mpv_command(ctx, args); }

int prmpv_set_property(mpv_handle *ctx, const char *name, mpv_format format, void *data) {
    return api()->mpv_set_property(ctx, name, format, data);
}

int prmpv_get_property(mpv_handle *ctx, const char *name, mpv_format format, void *data) {
    return api()->mpv_get_property(ctx, name, format, data);
}

char *prmpv_get_property_string(mpv_handle *ctx, const char *name) {
    return api()->mpv_get_property_string(ctx, name);
}

mpv_event *prmpv_wait_event(mpv_handle *ctx, double timeout) { return api()->mpv_wait_event(ctx, timeout); }

void prmpv_set_wakeup_callback(mpv_handle *ctx, void (*cb)(void *d), void *d) {
    api()->mpv_set_wakeup_callback(ctx, cb, d);
}

int prmpv_stream_cb_add_ro(mpv_handle *ctx, const char *protocol, void *user_data, mpv_stream_cb_open_ro_fn open_fn) {
    return api()->mpv_stream_cb_add_ro(ctx, protocol, user_data, open_fn);
}
