// See include/CMpvLoader.h, "PulseAudio's request size": libmpv's two calls into libpulse that
// set up and read back a playback stream's buffer, defined in the executable so that they are
// found before libpulse's own (the executable exports its symbols; libmpv, loaded later, binds its
// calls to the first definition in the process). Each calls libpulse's through dlsym.
#include "CMpvLoader.h"

#include <dlfcn.h>
#include <stddef.h>

static _Atomic unsigned request_permille;
static _Atomic uint64_t granted_buffer_us;
static _Atomic uint64_t granted_request_us;

void prmpv_set_pulse_request(unsigned permille) { request_permille = permille > 500 ? 500 : permille; }

struct prmpv_pa_buffer_attr prmpv_pulse_request_attr(struct prmpv_pa_buffer_attr attr, unsigned permille) {
    const uint32_t unset = (uint32_t)-1;
    if (permille == 0 || attr.minreq != unset || attr.tlength == unset || attr.tlength == 0) return attr;
    if (permille > 500) permille = 500;
    uint64_t request = (uint64_t)attr.tlength * permille / 1000;
    // The server rounds to whole frames and raises anything below one; 8 bytes is a whole number of
    // samples of every format it takes (mpv's tlength is a whole number of frames already).
    request -= request % 8;
    attr.minreq = request > 0 ? (uint32_t)request : unset;
    return attr;
}

int prmpv_pulse_granted(uint64_t *buffer_us, uint64_t *request_us) {
    uint64_t buffer = granted_buffer_us, request = granted_request_us;
    if (buffer == 0) return 0;
    *buffer_us = buffer;
    *request_us = request;
    return 1;
}

// libpulse's, found in the library libmpv loaded (never through the global scope, where the first
// definition is the one below).
static void *pulse_function(const char *name) {
    void *library = dlopen("libpulse.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (library == NULL) return NULL;
    void *function = dlsym(library, name);
    dlclose(library);  // NOLOAD took a reference of its own: the library stays as loaded
    return function;
}

typedef int (*connect_playback_fn)(void *, const char *, const struct prmpv_pa_buffer_attr *, int, const void *,
                                   void *);
typedef const struct prmpv_pa_buffer_attr *(*get_buffer_attr_fn)(void *);
typedef const void *(*get_sample_spec_fn)(void *);
typedef uint64_t (*bytes_to_usec_fn)(uint64_t, const void *);

__attribute__((visibility("default"), used)) int pa_stream_connect_playback(
    void *stream, const char *device, const struct prmpv_pa_buffer_attr *attr, int flags, const void *volume,
    void *sync_stream) {
    connect_playback_fn real = (connect_playback_fn)pulse_function("pa_stream_connect_playback");
    if (real == NULL) return -1;
    if (attr == NULL) return real(stream, device, attr, flags, volume, sync_stream);
    struct prmpv_pa_buffer_attr asked = prmpv_pulse_request_attr(*attr, request_permille);
    return real(stream, device, &asked, flags, volume, sync_stream);
}

__attribute__((visibility("default"), used)) const struct prmpv_pa_buffer_attr *pa_stream_get_buffer_attr(
    void *stream) {
    get_buffer_attr_fn real = (get_buffer_attr_fn)pulse_function("pa_stream_get_buffer_attr");
    if (real == NULL) return NULL;
    const struct prmpv_pa_buffer_attr *attr = real(stream);
    get_sample_spec_fn spec_of = (get_sample_spec_fn)pulse_function("pa_stream_get_sample_spec");
    bytes_to_usec_fn to_usec = (bytes_to_usec_fn)pulse_function("pa_bytes_to_usec");
    const void *spec = spec_of ? spec_of(stream) : NULL;
    if (attr != NULL && spec != NULL && to_usec != NULL) {
        granted_request_us = to_usec(attr->minreq, spec);
        granted_buffer_us = to_usec(attr->tlength, spec);
    }
    return attr;
}
