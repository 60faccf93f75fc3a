// libpulse's simple API through dlopen, loaded by the first live output (docs/LIVE.md, "The
// listener's output"): a command that never plays a live station does not map libpulse and the
// libraries it brings (libpulsecommon, libdbus, libsndfile, ...), nor pay for them at start-up.
#ifndef PARTYRADIO_CPULSESHIM_H
#define PARTYRADIO_CPULSESHIM_H

#include <stddef.h>
#include <stdint.h>

/// libpulse's simple API (Debian: libpulse0); it is loaded with dlopen, not linked. The same
/// library speaks to PipeWire's pulse server.
#define PRPULSE_SONAME "libpulse-simple.so.0"

/// Loads libpulse once per process: 0, or -1 with the reason in `prpulse_load_error()`. Thread-safe.
int prpulse_load(void);

/// Why libpulse could not be loaded, one sentence with the fix ("" when it was).
const char *prpulse_load_error(void);

/// An open playback stream (pa_simple).
typedef struct prpulse_stream prpulse_stream;

/// Opens a playback stream of interleaved signed 16-bit little-endian stereo at 48 kHz on
/// `server` (NULL: the default, as $PULSE_SERVER says) and `sink` (NULL: the default), named
/// `application` / `stream_name` in the server's lists, asking for a buffer of `buffer_us` and
/// a request every `request_us`. NULL and libpulse's error code in `error` when it cannot.
prpulse_stream *prpulse_open(const char *server, const char *application, const char *sink,
                             const char *stream_name, uint32_t buffer_us, uint32_t request_us, int *error);

/// Writes `bytes` of PCM, blocking until the stream's buffer took them all: 0, or -1 and the
/// error code in `error`.
int prpulse_write(prpulse_stream *stream, const void *data, size_t bytes, int *error);

/// How long until a sample written now is heard, in microseconds (pa_simple_get_latency: what
/// the stream holds plus the sink's own latency, interpolated between the server's timing
/// reports): 0, or -1 and the error code in `error`.
int prpulse_latency(prpulse_stream *stream, uint64_t *latency_us, int *error);

/// Closes the stream (what it still holds is dropped).
void prpulse_close(prpulse_stream *stream);

/// libpulse's sentence for an error code.
const char *prpulse_strerror(int error);

#endif
