#include "CPulseShim.h"

#include "CDynamicLibrary.h"
#include <pulse/error.h>
#include <pulse/simple.h>

// The functions partyradio calls (CDynamicLibrary fills the table). pa_strerror is libpulse's:
// dlsym on the simple API's handle finds it among the library's dependencies.
#define PRPULSE_FUNCTIONS(X) \
    X(pa_simple_new)         \
    X(pa_simple_write)       \
    X(pa_simple_get_latency) \
    X(pa_simple_free)        \
    X(pa_strerror)

PRDL_DECLARE(prpulse_dl, PRPULSE_FUNCTIONS)
PRDL_DEFINE(prpulse_dl, PRPULSE_SONAME, "libpulse", "libpulse0", PRPULSE_FUNCTIONS)

int prpulse_load(void) { return prpulse_dl_load(); }

const char *prpulse_load_error(void) { return prpulse_dl_load_error(); }

prpulse_stream *prpulse_open(const char *server, const char *application, const char *sink,
                             const char *stream_name, uint32_t buffer_us, uint32_t request_us, int *error) {
    if (prpulse_load() != 0) {
        *error = PA_ERR_NOTSUPPORTED;
        return NULL;
    }
    const prpulse_dl_table *pa = prpulse_dl_functions();
    pa_sample_spec spec = {.format = PA_SAMPLE_S16LE, .rate = 48000, .channels = 2};
    const uint32_t bytes_per_us_num = 48000 * 4;  // bytes a second
    pa_buffer_attr attr = {
        .maxlength = (uint32_t)-1,
        .tlength = (uint32_t)((uint64_t)buffer_us * bytes_per_us_num / 1000000),
        .prebuf = (uint32_t)-1,
        .minreq = (uint32_t)((uint64_t)request_us * bytes_per_us_num / 1000000),
        .fragsize = (uint32_t)-1,
    };
    attr.tlength -= attr.tlength % 4;
    attr.minreq -= attr.minreq % 4;
    if (attr.minreq == 0) attr.minreq = (uint32_t)-1;
    return (prpulse_stream *)pa->pa_simple_new(server, application, PA_STREAM_PLAYBACK, sink, stream_name, &spec, NULL,
                                               &attr, error);
}

int prpulse_write(prpulse_stream *stream, const void *data, size_t bytes, int *error) {
    return prpulse_dl_functions()->pa_simple_write((pa_simple *)stream, data, bytes, error) < 0 ? -1 : 0;
}

int prpulse_latency(prpulse_stream *stream, uint64_t *latency_us, int *error) {
    int code = 0;
    pa_usec_t latency = prpulse_dl_functions()->pa_simple_get_latency((pa_simple *)stream, &code);
    if (latency == (pa_usec_t)-1) {
        *error = code;
        return -1;
    }
    *latency_us = latency;
    return 0;
}

void prpulse_close(prpulse_stream *stream) {
    if (stream != NULL) prpulse_dl_functions()->pa_simple_free((pa_simple *)stream);
}

const char *prpulse_strerror(int error) {
    if (prpulse_load() != 0) return prpulse_load_error();
    return prpulse_dl_functions()->pa_strerror(error);
}
