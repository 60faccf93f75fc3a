#include "CPulseShim.h"

#include "CDynamicLibrary.h"
#include <pulse/error.h>
#include <pulse/introspect.h>
#include <pulse/mainloop.h>
#include <pulse/stream.h>
#include <pulse/timeval.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// The functions partyradio calls (CDynamicLibrary fills the table). pa_strerror is libpulse's:
// dlsym on the simple API's handle finds it among the library's dependencies.
#define PRPULSE_FUNCTIONS(X) \
    X(pa_strerror)                      \
    X(pa_mainloop_new)                  \
    X(pa_mainloop_free)                 \
    X(pa_mainloop_get_api)              \
    X(pa_mainloop_prepare)              \
    X(pa_mainloop_poll)                 \
    X(pa_mainloop_dispatch)             \
    X(pa_mainloop_iterate)              \
    X(pa_context_new)                   \
    X(pa_context_connect)               \
    X(pa_context_get_state)             \
    X(pa_context_errno)                 \
    X(pa_context_disconnect)            \
    X(pa_context_unref)                 \
    X(pa_context_get_server_info)       \
    X(pa_context_get_sink_info_by_name) \
    X(pa_context_get_source_info_list)  \
    X(pa_context_load_module)           \
    X(pa_context_unload_module)         \
    X(pa_context_set_default_sink)      \
    X(pa_operation_get_state)           \
    X(pa_operation_unref)               \
    X(pa_stream_new)                    \
    X(pa_stream_connect_record)         \
    X(pa_stream_connect_playback)       \
    X(pa_stream_write)                  \
    X(pa_stream_writable_size)          \
    X(pa_stream_get_state)              \
    X(pa_stream_peek)                   \
    X(pa_stream_drop)                   \
    X(pa_stream_get_latency)            \
    X(pa_stream_get_timing_info)        \
    X(pa_stream_update_timing_info)     \
    X(pa_stream_set_underflow_callback) \
    X(pa_bytes_to_usec)                 \
    X(pa_timeval_age)                   \
    X(pa_stream_disconnect)             \
    X(pa_stream_unref)                  \
    X(pa_proplist_gets)

PRDL_DECLARE(prpulse_dl, PRPULSE_FUNCTIONS)
PRDL_DEFINE(prpulse_dl, PRPULSE_SONAME, "libpulse", "libpulse0", PRPULSE_FUNCTIONS)

int prpulse_load(void) { return prpulse_dl_load(); }

const char *prpulse_load_error(void) { return prpulse_dl_load_error(); }

const char *prpulse_strerror(int error) {
    if (prpulse_load() != 0) return prpulse_load_error();
    return prpulse_dl_functions()->pa_strerror(error);
}

// MARK: - The asynchronous API, driven synchronously on the caller's thread

struct prpulse_session {
    pa_mainloop *loop;
    pa_context *context;
    pa_stream *record;
    // The chunk pa_stream_peek gave and how much of it was copied out: pa_stream_drop takes a whole chunk.
    const uint8_t *chunk;
    size_t chunk_length;
    size_t chunk_read;
    int chunk_is_hole;
};

// Runs the loop once, waiting at most `timeout_us` (-1: until something happens): 0, or -1.
static int prpulse_turn(prpulse_session *session, int timeout_us) {
    const prpulse_dl_table *pa = prpulse_dl_functions();
    if (pa->pa_mainloop_prepare(session->loop, timeout_us) < 0) return -1;
    if (pa->pa_mainloop_poll(session->loop) < 0) return -1;
    return pa->pa_mainloop_dispatch(session->loop) < 0 ? -1 : 0;
}

// CLOCK_MONOTONIC in microseconds, for the waits with a deadline.
static int64_t prpulse_now_us(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

// Waits for an operation to finish, turning the loop (each callback sets its own result): 0, or -1.
static int prpulse_wait(prpulse_session *session, pa_operation *operation, int *error) {
    const prpulse_dl_table *pa = prpulse_dl_functions();
    if (operation == NULL) {
        *error = pa->pa_context_errno(session->context);
        return -1;
    }
    while (pa->pa_operation_get_state(operation) == PA_OPERATION_RUNNING) {
        if (prpulse_turn(session, -1) < 0) {
            pa->pa_operation_unref(operation);
            *error = PA_ERR_CONNECTIONTERMINATED;
            return -1;
        }
    }
    pa->pa_operation_unref(operation);
    return 0;
}

prpulse_session *prpulse_session_open(const char *server, const char *application, int *error) {
    if (prpulse_load() != 0) {
        *error = PA_ERR_NOTSUPPORTED;
        return NULL;
    }
    const prpulse_dl_table *pa = prpulse_dl_functions();
    prpulse_session *session = calloc(1, sizeof *session);
    if (session == NULL || (session->loop = pa->pa_mainloop_new()) == NULL) {
        free(session);
        *error = PA_ERR_INTERNAL;
        return NULL;
    }
    session->context = pa->pa_context_new(pa->pa_mainloop_get_api(session->loop), application);
    if (session->context == NULL || pa->pa_context_connect(session->context, server, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0) {
        *error = session->context ? pa->pa_context_errno(session->context) : PA_ERR_INTERNAL;
        prpulse_session_close(session);
        return NULL;
    }
    for (;;) {
        pa_context_state_t state = pa->pa_context_get_state(session->context);
        if (state == PA_CONTEXT_READY) return session;
        if (!PA_CONTEXT_IS_GOOD(state) || prpulse_turn(session, -1) < 0) {
            *error = pa->pa_context_errno(session->context);
            if (*error == 0) *error = PA_ERR_CONNECTIONREFUSED;
            prpulse_session_close(session);
            return NULL;
        }
    }
}

void prpulse_session_close(prpulse_session *session) {
    if (session == NULL) return;
    const prpulse_dl_table *pa = prpulse_dl_functions();
    prpulse_record_close(session);
    if (session->context != NULL) {
        pa->pa_context_disconnect(session->context);
        pa->pa_context_unref(session->context);
    }
    if (session->loop != NULL) pa->pa_mainloop_free(session->loop);
    free(session);
}

struct prpulse_text {
    char *text;
    size_t size;
    int found;
    uint32_t index;
    const char *key; /* a sink property to copy into text, or NULL */
};

static void prpulse_copy(struct prpulse_text *out, const char *text) {
    if (out->size == 0) return;
    strncpy(out->text, text ? text : "", out->size - 1);
    out->text[out->size - 1] = 0;
}

static void prpulse_on_server_info(pa_context *context, const pa_server_info *info, void *userdata) {
    (void)context;
    struct prpulse_text *out = userdata;
    if (info != NULL) {
        prpulse_copy(out, info->default_sink_name);
        out->found = 1;
    }
}

int prpulse_default_sink(prpulse_session *session, char *name, size_t size, int *error) {
    struct prpulse_text out = {.text = name, .size = size};
    prpulse_copy(&out, "");
    pa_operation *operation =
        prpulse_dl_functions()->pa_context_get_server_info(session->context, prpulse_on_server_info, &out);
    return prpulse_wait(session, operation, error);
}

static void prpulse_on_success(pa_context *context, int success, void *userdata) {
    (void)context;
    *(int *)userdata = success;
}

int prpulse_set_default_sink(prpulse_session *session, const char *name, int *error) {
    int success = 0;
    pa_operation *operation =
        prpulse_dl_functions()->pa_context_set_default_sink(session->context, name, prpulse_on_success, &success);
    if (prpulse_wait(session, operation, error) < 0) return -1;
    if (!success) *error = prpulse_dl_functions()->pa_context_errno(session->context);
    return success ? 0 : -1;
}

static void prpulse_on_sink(pa_context *context, const pa_sink_info *info, int eol, void *userdata) {
    (void)context;
    struct prpulse_text *out = userdata;
    if (eol == 0 && info != NULL) {
        out->found = 1;
        out->index = info->owner_module;
        if (out->key != NULL && info->proplist != NULL)
            prpulse_copy(out, prpulse_dl_functions()->pa_proplist_gets(info->proplist, out->key));
    }
}

int prpulse_find_sink(prpulse_session *session, const char *name, uint32_t *owner_module, const char *key,
                      char *value, size_t size, int *error) {
    struct prpulse_text out = {.text = value, .size = size, .index = PA_INVALID_INDEX, .key = key};
    prpulse_copy(&out, "");
    pa_operation *operation =
        prpulse_dl_functions()->pa_context_get_sink_info_by_name(session->context, name, prpulse_on_sink, &out);
    if (prpulse_wait(session, operation, error) < 0) return -1;
    *owner_module = out.index;
    return out.found;
}

static void prpulse_on_module(pa_context *context, uint32_t index, void *userdata) {
    (void)context;
    *(uint32_t *)userdata = index;
}

int prpulse_load_module(prpulse_session *session, const char *name, const char *argument, uint32_t *index,
                        int *error) {
    *index = PA_INVALID_INDEX;
    pa_operation *operation =
        prpulse_dl_functions()->pa_context_load_module(session->context, name, argument, prpulse_on_module, index);
    if (prpulse_wait(session, operation, error) < 0) return -1;
    if (*index == PA_INVALID_INDEX) {
        *error = prpulse_dl_functions()->pa_context_errno(session->context);
        return -1;
    }
    return 0;
}

int prpulse_unload_module(prpulse_session *session, uint32_t index, int *error) {
    int success = 0;
    pa_operation *operation =
        prpulse_dl_functions()->pa_context_unload_module(session->context, index, prpulse_on_success, &success);
    if (prpulse_wait(session, operation, error) < 0) return -1;
    if (!success) *error = prpulse_dl_functions()->pa_context_errno(session->context);
    return success ? 0 : -1;
}

static void prpulse_on_source(pa_context *context, const pa_source_info *info, int eol, void *userdata) {
    (void)context;
    struct prpulse_text *out = userdata;
    if (eol != 0 || info == NULL || info->name == NULL) return;
    size_t used = strlen(out->text);
    size_t length = strlen(info->name);
    if (used + length + 2 > out->size) return;
    memcpy(out->text + used, info->name, length);
    out->text[used + length] = '\n';
    out->text[used + length + 1] = 0;
    out->found += 1;
}

int prpulse_source_names(prpulse_session *session, char *names, size_t size, int *error) {
    struct prpulse_text out = {.text = names, .size = size};
    prpulse_copy(&out, "");
    pa_operation *operation =
        prpulse_dl_functions()->pa_context_get_source_info_list(session->context, prpulse_on_source, &out);
    if (prpulse_wait(session, operation, error) < 0) return -1;
    return out.found;
}

int prpulse_record_open(prpulse_session *session, const char *source, const char *stream_name,
                        uint32_t fragment_bytes, int timeout_ms, int *error) {
    const prpulse_dl_table *pa = prpulse_dl_functions();
    pa_sample_spec spec = {.format = PA_SAMPLE_S16LE, .rate = 48000, .channels = 2};
    pa_buffer_attr attr = {
        .maxlength = (uint32_t)-1,
        .tlength = (uint32_t)-1,
        .prebuf = (uint32_t)-1,
        .minreq = (uint32_t)-1,
        .fragsize = fragment_bytes,
    };
    session->record = pa->pa_stream_new(session->context, stream_name, &spec, NULL);
    if (session->record == NULL) {
        *error = pa->pa_context_errno(session->context);
        return -1;
    }
    pa_stream_flags_t flags = PA_STREAM_ADJUST_LATENCY | PA_STREAM_AUTO_TIMING_UPDATE | PA_STREAM_INTERPOLATE_TIMING;
    if (pa->pa_stream_connect_record(session->record, source, &attr, flags) < 0) {
        *error = pa->pa_context_errno(session->context);
        prpulse_record_close(session);
        return -1;
    }
    int64_t deadline_us = prpulse_now_us() + (int64_t)timeout_ms * 1000;
    for (;;) {
        pa_stream_state_t state = pa->pa_stream_get_state(session->record);
        if (state == PA_STREAM_READY) return 0;
        int64_t left_us = deadline_us - prpulse_now_us();
        if (state == PA_STREAM_CREATING && left_us <= 0) {
            // Still not answered: nothing connects the stream to its source (under PipeWire, no session
            // manager runs). The server forgets the stream when the session closes.
            *error = PA_ERR_TIMEOUT;
            prpulse_record_close(session);
            return -1;
        }
        if (!PA_STREAM_IS_GOOD(state) || prpulse_turn(session, left_us > 0 ? (int)left_us : 0) < 0) {
            *error = pa->pa_context_errno(session->context);
            if (*error == 0) *error = PA_ERR_NOENTITY;
            prpulse_record_close(session);
            return -1;
        }
    }
}

int prpulse_record_read(prpulse_session *session, void *data, size_t bytes, int timeout_ms, int *error) {
    const prpulse_dl_table *pa = prpulse_dl_functions();
    size_t filled = 0;
    int turned = 0;
    while (filled < bytes) {
        if (session->chunk_length > 0) {
            size_t take = session->chunk_length - session->chunk_read;
            if (take > bytes - filled) take = bytes - filled;
            if (session->chunk_is_hole) memset((uint8_t *)data + filled, 0, take);
            else memcpy((uint8_t *)data + filled, session->chunk + session->chunk_read, take);
            filled += take;
            session->chunk_read += take;
            if (session->chunk_read == session->chunk_length) {
                pa->pa_stream_drop(session->record);
                session->chunk_length = 0;
                session->chunk_read = 0;
            }
            continue;
        }
        const void *peeked = NULL;
        size_t length = 0;
        if (pa->pa_stream_peek(session->record, &peeked, &length) < 0) {
            *error = pa->pa_context_errno(session->context);
            return -1;
        }
        if (length > 0) {
            session->chunk = peeked;
            session->chunk_length = length;
            session->chunk_read = 0;
            session->chunk_is_hole = peeked == NULL;
            continue;
        }
        if (turned) break;
        if (pa->pa_stream_get_state(session->record) != PA_STREAM_READY) {
            *error = pa->pa_context_errno(session->context);
            if (*error == 0) *error = PA_ERR_CONNECTIONTERMINATED;
            return -1;
        }
        if (prpulse_turn(session, timeout_ms * 1000) < 0) {
            *error = PA_ERR_CONNECTIONTERMINATED;
            return -1;
        }
        // One wait per call: what came is taken, and the caller looks at the clock and its stop flag.
        turned = 1;
    }
    return (int)filled;
}

int prpulse_record_latency(prpulse_session *session, int64_t *latency_us, int *error) {
    const prpulse_dl_table *pa = prpulse_dl_functions();
    pa_usec_t usec = 0;
    int negative = 0;
    if (pa->pa_stream_get_latency(session->record, &usec, &negative) < 0) {
        *error = pa->pa_context_errno(session->context);
        return -1;
    }
    int64_t latency = negative ? -(int64_t)usec : (int64_t)usec;
    // The chunk partly copied out counts in the latency until it is dropped (pa_simple does the same).
    if (session->chunk_length > 0) latency -= (int64_t)(session->chunk_read * 1000000 / (48000 * 4));
    *latency_us = latency;
    return 0;
}

void prpulse_record_close(prpulse_session *session) {
    if (session->record == NULL) return;
    const prpulse_dl_table *pa = prpulse_dl_functions();
    pa->pa_stream_disconnect(session->record);
    pa->pa_stream_unref(session->record);
    session->record = NULL;
    session->chunk_length = 0;
    session->chunk_read = 0;
}

// MARK: - The live output: a playback stream on a session of its own, driven on the audio thread

struct prpulse_stream {
    prpulse_session *session;
    pa_stream *play;
    // The server said the stream ran dry since the last timing report was asked for.
    int ran_dry;
    // When a timing report was last asked for and came (prpulse_now_us).
    int64_t reported_us;
};

// How old the timing report may be for a latency reading. libpulse asks for reports by itself only
// every 1.5 s once a stream has played a while, and the reading carries the last one forward as
// if the sink played at exactly its nominal rate: a null sink runs about 270 ppm fast, 0.4 ms in
// 1.5 s. Asking costs a round trip to the server, 4 a second.
#define PRPULSE_REPORT_MAX_AGE_US 250000

static void prpulse_ran_dry(pa_stream *play, void *userdata) {
    (void)play;
    ((prpulse_stream *)userdata)->ran_dry = 1;
}

// The stream and its connection still work: 0, or -1 and the error code.
static int prpulse_play_alive(prpulse_stream *stream, int *error) {
    const prpulse_dl_table *pa = prpulse_dl_functions();
    if (pa->pa_stream_get_state(stream->play) == PA_STREAM_READY) return 0;
    *error = pa->pa_context_errno(stream->session->context);
    if (*error == 0) *error = PA_ERR_CONNECTIONTERMINATED;
    return -1;
}

prpulse_stream *prpulse_open(const char *server, const char *application, const char *sink,
                             const char *stream_name, uint32_t buffer_us, uint32_t request_us, uint32_t start_us,
                             int *error) {
    prpulse_session *session = prpulse_session_open(server, application, error);
    if (session == NULL) return NULL;
    const prpulse_dl_table *pa = prpulse_dl_functions();
    prpulse_stream *stream = calloc(1, sizeof *stream);
    if (stream == NULL) {
        *error = PA_ERR_INTERNAL;
        prpulse_session_close(session);
        return NULL;
    }
    stream->session = session;
    pa_sample_spec spec = {.format = PA_SAMPLE_S16LE, .rate = 48000, .channels = 2};
    const uint32_t bytes_per_second = 48000 * 4;
    pa_buffer_attr attr = {
        .maxlength = (uint32_t)-1,
        .tlength = (uint32_t)((uint64_t)buffer_us * bytes_per_second / 1000000),
        .prebuf = start_us == 0 ? (uint32_t)-1 : (uint32_t)((uint64_t)start_us * bytes_per_second / 1000000),
        .minreq = (uint32_t)((uint64_t)request_us * bytes_per_second / 1000000),
        .fragsize = (uint32_t)-1,
    };
    attr.tlength -= attr.tlength % 4;
    attr.minreq -= attr.minreq % 4;
    if (start_us != 0) attr.prebuf -= attr.prebuf % 4;
    if (attr.minreq == 0) attr.minreq = (uint32_t)-1;
    stream->play = pa->pa_stream_new(session->context, stream_name, &spec, NULL);
    if (stream->play != NULL) pa->pa_stream_set_underflow_callback(stream->play, prpulse_ran_dry, stream);
    // pa_simple's flags: the latency is asked at any time and interpolated between the server's reports.
    pa_stream_flags_t flags = PA_STREAM_INTERPOLATE_TIMING | PA_STREAM_ADJUST_LATENCY | PA_STREAM_AUTO_TIMING_UPDATE;
    if (stream->play == NULL || pa->pa_stream_connect_playback(stream->play, sink, &attr, flags, NULL, NULL) < 0) {
        *error = pa->pa_context_errno(session->context);
        prpulse_close(stream);
        return NULL;
    }
    // At most 5 s, as the DJ's record stream: PipeWire's pulse server answers only once its session
    // manager linked the stream, and libpulse itself gives up only after 30 s.
    int64_t deadline_us = prpulse_now_us() + 5000000;
    for (;;) {
        pa_stream_state_t state = pa->pa_stream_get_state(stream->play);
        if (state == PA_STREAM_READY) return stream;
        int64_t left_us = deadline_us - prpulse_now_us();
        if (state == PA_STREAM_CREATING && left_us <= 0) {
            *error = PA_ERR_TIMEOUT;
            prpulse_close(stream);
            return NULL;
        }
        if (!PA_STREAM_IS_GOOD(state) || prpulse_turn(session, left_us > 0 ? (int)left_us : 0) < 0) {
            *error = pa->pa_context_errno(session->context);
            if (*error == 0) *error = PA_ERR_NOENTITY;
            prpulse_close(stream);
            return NULL;
        }
    }
}

int prpulse_write(prpulse_stream *stream, const void *data, size_t bytes, int *error) {
    const prpulse_dl_table *pa = prpulse_dl_functions();
    const uint8_t *from = data;
    while (bytes > 0) {
        if (prpulse_play_alive(stream, error) < 0) return -1;
        size_t room = pa->pa_stream_writable_size(stream->play);
        if (room == (size_t)-1) {
            *error = pa->pa_context_errno(stream->session->context);
            return -1;
        }
        if (room == 0) {
            // As pa_simple_write: wait for the server's request for more.
            if (prpulse_turn(stream->session, -1) < 0) {
                *error = PA_ERR_CONNECTIONTERMINATED;
                return -1;
            }
            continue;
        }
        size_t length = room < bytes ? room : bytes;
        if (pa->pa_stream_write(stream->play, from, length, NULL, 0, PA_SEEK_RELATIVE) < 0) {
            *error = pa->pa_context_errno(stream->session->context);
            return -1;
        }
        from += length;
        bytes -= length;
    }
    // Sent now, on this thread: the loop's turn without waiting writes what was queued to the server.
    if (pa->pa_mainloop_iterate(stream->session->loop, 0, NULL) < 0) {
        *error = PA_ERR_CONNECTIONTERMINATED;
        return -1;
    }
    return 0;
}

int prpulse_latency(prpulse_stream *stream, uint64_t *latency_us, int *error) {
    const prpulse_dl_table *pa = prpulse_dl_functions();
    // What the server sent meanwhile (timing reports, requests) first, without waiting.
    if (pa->pa_mainloop_iterate(stream->session->loop, 0, NULL) < 0) {
        *error = PA_ERR_CONNECTIONTERMINATED;
        return -1;
    }
    // The server's last timing report itself, carried forward by its age while the stream plays
    // (what mpv's pulse-latency-hacks do). libpulse's own reading (pa_stream_get_latency)
    // interpolates through its smoother, which follows a stream that stopped and started again
    // only slowly: right after the stream ran dry it read 13-15 ms short in PulseOutputTests, where
    // this reads within 0.3 ms, and a live player placed on it was that much late.
    // A report from before the stream ran dry, carried forward, counts the time it stood still as
    // played: a fresh one after the server said it ran dry, and whenever the last is older than
    // PRPULSE_REPORT_MAX_AGE_US.
    if (prpulse_play_alive(stream, error) < 0) return -1;
    if (stream->ran_dry || prpulse_now_us() - stream->reported_us > PRPULSE_REPORT_MAX_AGE_US) {
        stream->ran_dry = 0;
        if (prpulse_wait(stream->session, pa->pa_stream_update_timing_info(stream->play, NULL, NULL), error) < 0) {
            return -1;
        }
        stream->reported_us = prpulse_now_us();
    }
    const pa_timing_info *info = pa->pa_stream_get_timing_info(stream->play);
    if (info != NULL && !info->write_index_corrupt && !info->read_index_corrupt) {
        static const pa_sample_spec spec = {.format = PA_SAMPLE_S16LE, .rate = 48000, .channels = 2};
        int64_t queued = info->write_index - info->read_index;
        int64_t us = queued < 0 ? -(int64_t)pa->pa_bytes_to_usec((uint64_t)-queued, &spec)
                                : (int64_t)pa->pa_bytes_to_usec((uint64_t)queued, &spec);
        us += (int64_t)info->sink_usec;
        if (info->playing) us -= (int64_t)pa->pa_timeval_age(&info->timestamp);
        *latency_us = us < 0 ? 0 : (uint64_t)us;  // as pa_simple_get_latency
        return 0;
    }
    // No report yet: libpulse's reading, which waits for the first.
    for (;;) {
        if (prpulse_play_alive(stream, error) < 0) return -1;
        pa_usec_t usec = 0;
        int negative = 0;
        if (pa->pa_stream_get_latency(stream->play, &usec, &negative) >= 0) {
            *latency_us = negative ? 0 : usec;  // as pa_simple_get_latency
            return 0;
        }
        if (pa->pa_context_errno(stream->session->context) != PA_ERR_NODATA) {
            *error = pa->pa_context_errno(stream->session->context);
            return -1;
        }
        // No timing report yet: wait for the first, as pa_simple_get_latency does.
        if (prpulse_turn(stream->session, -1) < 0) {
            *error = PA_ERR_CONNECTIONTERMINATED;
            return -1;
        }
    }
}

int prpulse_sleep(prpulse_stream *stream, uint32_t timeout_us, int *error) {
    int64_t deadline = prpulse_now_us() + timeout_us;
    for (;;) {
        if (prpulse_play_alive(stream, error) < 0) return -1;
        int64_t left = deadline - prpulse_now_us();
        if (left <= 0) return 0;
        if (prpulse_turn(stream->session, left > 1000000 ? 1000000 : (int)left) < 0) {
            *error = PA_ERR_CONNECTIONTERMINATED;
            return -1;
        }
    }
}

void prpulse_close(prpulse_stream *stream) {
    if (stream == NULL) return;
    const prpulse_dl_table *pa = prpulse_dl_functions();
    if (stream->play != NULL) {
        pa->pa_stream_disconnect(stream->play);
        pa->pa_stream_unref(stream->play);
    }
    prpulse_session_close(stream->session);
    free(stream);
}
