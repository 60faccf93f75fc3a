// See include/CMpvLoader.h, "PulseAudio's request size": libmpv's two calls into libpulse that
// set up and read back a playback stream's buffer, defined in the executable so that they are
// found before libpulse's own (the executable exports its symbols; libmpv, loaded later, binds its
// calls to the first definition in the process). Each calls libpulse's through dlsym.
#include "CMpvLoader.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/time.h>
#include <time.h>

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

struct prmpv_pa_buffer_attr prmpv_pulse_reported_attr(struct prmpv_pa_buffer_attr attr, uint32_t most) {
    const uint32_t unset = (uint32_t)-1;
    if (attr.minreq == unset || attr.minreq == 0 || attr.tlength == unset) return attr;
    uint64_t four = (uint64_t)attr.minreq * 4;
    if (four > most) four = most;
    if (four > attr.tlength) attr.tlength = (uint32_t)four;
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
// definition is the one below). Each is looked up once: libmpv is never closed (loader.c), so the
// libpulse it loaded stays, and a lookup (dlopen, dlsym, dlclose) on each of mpv's hundred-odd
// calls a second took the loader's lock every time.
enum pulse_function_id {
    pf_connect_playback,
    pf_get_buffer_attr,
    pf_get_sample_spec,
    pf_bytes_to_usec,
    pf_operation_ref,
    pf_operation_unref,
    pf_operation_get_state,
    pf_update_timing_info,
    pf_get_timing_info,
    pf_cork,
    pf_get_context,
    pf_get_index,
    pf_set_sink_input_volume,
    pf_count
};
static const char *const pulse_function_names[pf_count] = {
    [pf_connect_playback] = "pa_stream_connect_playback",
    [pf_get_buffer_attr] = "pa_stream_get_buffer_attr",
    [pf_get_sample_spec] = "pa_stream_get_sample_spec",
    [pf_bytes_to_usec] = "pa_bytes_to_usec",
    [pf_operation_ref] = "pa_operation_ref",
    [pf_operation_unref] = "pa_operation_unref",
    [pf_operation_get_state] = "pa_operation_get_state",
    [pf_update_timing_info] = "pa_stream_update_timing_info",
    [pf_get_timing_info] = "pa_stream_get_timing_info",
    [pf_cork] = "pa_stream_cork",
    [pf_get_context] = "pa_stream_get_context",
    [pf_get_index] = "pa_stream_get_index",
    [pf_set_sink_input_volume] = "pa_context_set_sink_input_volume",
};
static void *_Atomic pulse_functions[pf_count];

static void *pulse_function(enum pulse_function_id id) {
    void *function = pulse_functions[id];
    if (function != NULL) return function;
    void *library = dlopen("libpulse.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (library == NULL) return NULL;
    function = dlsym(library, pulse_function_names[id]);
    dlclose(library);  // NOLOAD took a reference of its own: the library stays as loaded
    pulse_functions[id] = function;  // the same address whichever thread stores it
    return function;
}

typedef int (*connect_playback_fn)(void *, const char *, const struct prmpv_pa_buffer_attr *, int, const void *,
                                   void *);
typedef const struct prmpv_pa_buffer_attr *(*get_buffer_attr_fn)(void *);
typedef const void *(*get_sample_spec_fn)(void *);
typedef uint64_t (*bytes_to_usec_fn)(uint64_t, const void *);

static void note_connect(void *stream, int flags);
static void note_volume_stream(void *stream, int flags);

__attribute__((visibility("default"), used)) int pa_stream_connect_playback(
    void *stream, const char *device, const struct prmpv_pa_buffer_attr *attr, int flags, const void *volume,
    void *sync_stream) {
    connect_playback_fn real = (connect_playback_fn)pulse_function(pf_connect_playback);
    if (real == NULL) return -1;
    note_connect(stream, flags);
    note_volume_stream(stream, flags);
    if (attr == NULL) return real(stream, device, attr, flags, volume, sync_stream);
    struct prmpv_pa_buffer_attr asked = prmpv_pulse_request_attr(*attr, request_permille);
    return real(stream, device, &asked, flags, volume, sync_stream);
}

__attribute__((visibility("default"), used)) const struct prmpv_pa_buffer_attr *pa_stream_get_buffer_attr(
    void *stream) {
    get_buffer_attr_fn real = (get_buffer_attr_fn)pulse_function(pf_get_buffer_attr);
    if (real == NULL) return NULL;
    const struct prmpv_pa_buffer_attr *attr = real(stream);
    get_sample_spec_fn spec_of = (get_sample_spec_fn)pulse_function(pf_get_sample_spec);
    bytes_to_usec_fn to_usec = (bytes_to_usec_fn)pulse_function(pf_bytes_to_usec);
    const void *spec = spec_of ? spec_of(stream) : NULL;
    if (attr == NULL || spec == NULL || to_usec == NULL) return attr;
    uint64_t buffer_us = to_usec(attr->tlength, spec);
    granted_request_us = to_usec(attr->minreq, spec);
    granted_buffer_us = buffer_us;
    if (request_permille == 0 || buffer_us == 0) return attr;
    // No longer than mpv's own queue (`audio-buffer`, 0.2 s by default), which is as long as the
    // longer of the two: so the queue stays as it was.
    uint64_t most = (uint64_t)attr->tlength * prmpv_mpv_queue_us / buffer_us;
    static _Thread_local struct prmpv_pa_buffer_attr reported;
    reported = prmpv_pulse_reported_attr(*attr, most > (uint32_t)-1 ? (uint32_t)-1 : (uint32_t)most);
    return &reported;
}

// PulseAudio's timing reports (include/CMpvLoader.h). Everything below runs under the stream's
// threaded mainloop lock, which mpv holds around every call into libpulse: the static state needs
// no lock of its own, but for the counters read from other threads.

static _Atomic uint64_t timing_max_age_us;
static _Atomic uint64_t timing_sent;
static _Atomic uint64_t timing_reused;
// The stream connected without libpulse's own timing updates (mpv's with `pulse-latency-hacks`),
// the last timing update asked for on it (a reference of ours) and when that was asked for.
static void *timed_stream;
static void *last_update;
static uint64_t last_update_at_us;

enum { prmpv_pa_stream_auto_timing_update = 0x0008, prmpv_pa_operation_done = 1 };

void prmpv_set_pulse_timing_reuse(unsigned milliseconds) { timing_max_age_us = (uint64_t)milliseconds * 1000; }

struct prmpv_pa_timing_info prmpv_pulse_timing_at(struct prmpv_pa_timing_info info, int64_t now_us) {
    if (!info.playing) return info;
    int64_t taken = (int64_t)info.timestamp.tv_sec * 1000000 + info.timestamp.tv_usec;
    info.transport_usec = now_us > taken ? (uint64_t)(now_us - taken) : 0;
    return info;
}

int prmpv_pulse_timing_reusable(uint64_t age_us, uint64_t max_age_us, int answered, int indexes_corrupt) {
    return max_age_us > 0 && answered && !indexes_corrupt && age_us < max_age_us;
}

void prmpv_pulse_timing_counts(uint64_t *sent, uint64_t *reused) {
    *sent = timing_sent;
    *reused = timing_reused;
}

static uint64_t monotonic_us(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
}

typedef void *(*operation_ref_fn)(void *);
typedef void (*operation_unref_fn)(void *);
typedef int (*operation_get_state_fn)(void *);
typedef void *(*update_timing_info_fn)(void *, void *, void *);
typedef const struct prmpv_pa_timing_info *(*get_timing_info_fn)(void *);

static void forget_last_update(void) {
    if (last_update == NULL) return;
    operation_unref_fn unref = (operation_unref_fn)pulse_function(pf_operation_unref);
    if (unref != NULL) unref(last_update);
    last_update = NULL;
}

// Called by pa_stream_connect_playback below, before libpulse's.
static void note_connect(void *stream, int flags) {
    forget_last_update();
    timed_stream = (flags & prmpv_pa_stream_auto_timing_update) ? NULL : stream;
}

__attribute__((visibility("default"), used)) void *pa_stream_update_timing_info(
    void *stream, void *callback, void *userdata) {
    update_timing_info_fn real = (update_timing_info_fn)pulse_function(pf_update_timing_info);
    if (real == NULL) return NULL;
    if (callback != NULL || stream == NULL || stream != timed_stream) return real(stream, callback, userdata);
    operation_ref_fn ref = (operation_ref_fn)pulse_function(pf_operation_ref);
    operation_get_state_fn state_of = (operation_get_state_fn)pulse_function(pf_operation_get_state);
    get_timing_info_fn info_of = (get_timing_info_fn)pulse_function(pf_get_timing_info);
    if (ref == NULL || state_of == NULL || info_of == NULL) return real(stream, callback, userdata);
    uint64_t now = monotonic_us();
    if (last_update != NULL) {
        const struct prmpv_pa_timing_info *info = info_of(stream);
        int corrupt = info == NULL || info->read_index_corrupt || info->write_index_corrupt;
        if (prmpv_pulse_timing_reusable(now - last_update_at_us, timing_max_age_us,
                                        state_of(last_update) == prmpv_pa_operation_done, corrupt)) {
            timing_reused++;
            return ref(last_update);  // answered already: the caller's wait returns at once
        }
    }
    void *update = real(stream, callback, userdata);
    if (update != NULL) {
        timing_sent++;
        forget_last_update();
        last_update = ref(update);
        last_update_at_us = now;
    }
    return update;
}

__attribute__((visibility("default"), used)) const struct prmpv_pa_timing_info *pa_stream_get_timing_info(
    void *stream) {
    get_timing_info_fn real = (get_timing_info_fn)pulse_function(pf_get_timing_info);
    if (real == NULL) return NULL;
    const struct prmpv_pa_timing_info *info = real(stream);
    if (info == NULL || stream != timed_stream || timing_max_age_us == 0) return info;
    static _Thread_local struct prmpv_pa_timing_info now_info;
    struct timeval now;
    gettimeofday(&now, NULL);
    now_info = prmpv_pulse_timing_at(*info, (int64_t)now.tv_sec * 1000000 + now.tv_usec);
    return &now_info;
}

// The stream's volume at the server (include/CMpvLoader.h). The streams mpv opened and has not yet
// uncorked: each mpv instance calls under its own mainloop's lock, so the list has a lock of its
// own. A stream freed while still corked stays listed until pushed out by later ones; were its
// address used again by a stream of libpulse-simple's, that one is never corked, so never touched.

enum { prmpv_pa_stream_start_corked = 0x0001, prmpv_pa_stream_not_monotonic = 0x0004, prmpv_pa_channels_max = 32 };

/// libpulse's pa_cvolume and pa_sample_spec (pulse/volume.h, pulse/sample.h, unchanged since 0.9.15).
struct prmpv_pa_cvolume {
    uint8_t channels;
    uint32_t values[prmpv_pa_channels_max];
};
struct prmpv_pa_sample_spec {
    int format;
    uint32_t rate;
    uint8_t channels;
};

static _Atomic int stream_volume = -1;
static _Atomic uint64_t stream_volumes_set;
static pthread_mutex_t corked_lock = PTHREAD_MUTEX_INITIALIZER;
static void *corked_streams[8];
static unsigned corked_next;

void prmpv_set_pulse_stream_volume(int volume) { stream_volume = volume < 0 ? -1 : (volume > 100 ? 100 : volume); }

uint32_t prmpv_pulse_volume(int volume) {
    if (volume < 0) volume = 0;
    if (volume > 100) volume = 100;
    return (uint32_t)lrint((double)volume * 0x10000 / 100);
}

uint64_t prmpv_pulse_stream_volumes_set(void) { return stream_volumes_set; }

// Called by pa_stream_connect_playback above, before libpulse's.
static void note_volume_stream(void *stream, int flags) {
    int mpv_flags = prmpv_pa_stream_start_corked | prmpv_pa_stream_not_monotonic;
    if (stream_volume < 0 || (flags & mpv_flags) != mpv_flags) return;
    pthread_mutex_lock(&corked_lock);
    corked_streams[corked_next++ % 8] = stream;
    pthread_mutex_unlock(&corked_lock);
}

// Whether `stream` was listed, taking it off the list.
static int take_corked(void *stream) {
    int found = 0;
    pthread_mutex_lock(&corked_lock);
    for (unsigned index = 0; index < 8; index++) {
        if (corked_streams[index] != stream) continue;
        corked_streams[index] = NULL;
        found = 1;
    }
    pthread_mutex_unlock(&corked_lock);
    return found;
}

typedef void *(*cork_fn)(void *, int, void *, void *);
typedef void *(*get_context_fn)(void *);
typedef uint32_t (*get_index_fn)(void *);
typedef void *(*set_sink_input_volume_fn)(void *, uint32_t, const struct prmpv_pa_cvolume *, void *, void *);

static void give_stream_volume(void *stream) {
    int volume = stream_volume;
    get_context_fn context_of = (get_context_fn)pulse_function(pf_get_context);
    get_index_fn index_of = (get_index_fn)pulse_function(pf_get_index);
    get_sample_spec_fn spec_of = (get_sample_spec_fn)pulse_function(pf_get_sample_spec);
    set_sink_input_volume_fn set_volume = (set_sink_input_volume_fn)pulse_function(pf_set_sink_input_volume);
    operation_unref_fn unref = (operation_unref_fn)pulse_function(pf_operation_unref);
    if (volume < 0 || !context_of || !index_of || !spec_of || !set_volume || !unref) return;
    const struct prmpv_pa_sample_spec *spec = spec_of(stream);
    uint32_t index = index_of(stream);
    if (spec == NULL || spec->channels == 0 || spec->channels > prmpv_pa_channels_max || index == (uint32_t)-1) return;
    struct prmpv_pa_cvolume cvolume = {.channels = spec->channels};
    for (unsigned channel = 0; channel < spec->channels; channel++) cvolume.values[channel] = prmpv_pulse_volume(volume);
    void *operation = set_volume(context_of(stream), index, &cvolume, NULL, NULL);
    if (operation == NULL) return;
    unref(operation);
    stream_volumes_set++;
}

__attribute__((visibility("default"), used)) void *pa_stream_cork(void *stream, int corked, void *callback,
                                                                   void *userdata) {
    cork_fn real = (cork_fn)pulse_function(pf_cork);
    if (real == NULL) return NULL;
    // Sent first, so the server takes it before the uncork: the stream plays nothing at its old volume.
    if (!corked && stream != NULL && take_corked(stream)) give_stream_volume(stream);
    return real(stream, corked, callback, userdata);
}
