// libpulse through dlopen, loaded by the first live output (docs/LIVE.md, "The
// listener's output"): a command that never plays a live station does not map libpulse and the
// libraries it brings (libpulsecommon, libdbus, libsndfile, ...), nor pay for them at start-up.
#ifndef PARTYRADIO_CPULSESHIM_H
#define PARTYRADIO_CPULSESHIM_H

#include <stddef.h>
#include <stdint.h>

/// libpulse (Debian: libpulse0), through the simple API's library, whose dependencies bring the
/// rest; it is loaded with dlopen, not linked. The same library speaks to PipeWire's pulse server.
#define PRPULSE_SONAME "libpulse-simple.so.0"

/// Loads libpulse once per process: 0, or -1 with the reason in `prpulse_load_error()`. Thread-safe.
int prpulse_load(void);

/// Why libpulse could not be loaded, one sentence with the fix ("" when it was).
const char *prpulse_load_error(void);

/// libpulse's sentence for an error code.
const char *prpulse_strerror(int error);

// MARK: - The DJ's capture (docs/LIVE.md, "Sources"): libpulse's asynchronous API, which pa_simple
// does not expose (modules, sinks, sources, the default sink), each call driven to its end on the
// caller's thread by a pa_mainloop of the session's own, so Swift passes no callbacks to C.

/// A connection to the sound server with its own main loop; one thread at a time.
typedef struct prpulse_session prpulse_session;

/// Connects to `server` (NULL: $PULSE_SERVER or the session's), never spawning one, so that a
/// missing server is an error, not a surprise: NULL and the error code when it cannot.
prpulse_session *prpulse_session_open(const char *server, const char *application, int *error);

/// Closes the record stream, if any, and the connection; what was loaded stays loaded.
void prpulse_session_close(prpulse_session *session);

/// The server's default sink's name into `name` ("" when none), because pa_server_info comes by callback:
/// 0, or -1 and the error code.
int prpulse_default_sink(prpulse_session *session, char *name, size_t size, int *error);

/// Makes `name` the default sink, because pa_context_set_default_sink answers by callback: 0, or -1.
int prpulse_set_default_sink(prpulse_session *session, const char *name, int *error);

/// Whether the sink `name` exists, because pa_sink_info comes by callback: 1 (its owner module's index in
/// `owner_module`, and its property `key` in `value`, empty when it has none), 0 when it does not, -1 and
/// the error code.
int prpulse_find_sink(prpulse_session *session, const char *name, uint32_t *owner_module, const char *key,
                      char *value, size_t size, int *error);

/// Loads a module (`argument` as pactl load-module takes it), because the index comes by callback: 0 and
/// its index, or -1 and the error code.
int prpulse_load_module(prpulse_session *session, const char *name, const char *argument, uint32_t *index,
                        int *error);

/// Unloads a module, because the answer comes by callback: 0, or -1 and the error code.
int prpulse_unload_module(prpulse_session *session, uint32_t index, int *error);

/// The names of every source, each followed by a newline, into `names` (those that do not fit are left
/// out), because the list comes by callback: how many, or -1 and the error code.
int prpulse_source_names(prpulse_session *session, char *names, size_t size, int *error);

/// Opens the session's record stream of interleaved s16le stereo at 48 kHz from `source`, sent in
/// fragments of `fragment_bytes`, with automatic, interpolated timing so its latency can be asked at
/// any time (pa_simple's record stream cannot wait with a timeout), waiting at most `timeout_ms` for
/// it to be ready (PipeWire's pulse server answers only once a session manager linked the stream, and
/// libpulse itself gives up after 30 s): 0, or -1 and the error code (PA_ERR_TIMEOUT when the wait
/// ran out).
int prpulse_record_open(prpulse_session *session, const char *source, const char *stream_name,
                        uint32_t fragment_bytes, int timeout_ms, int *error);

/// Copies up to `bytes` of what was recorded into `data`, waiting at most `timeout_ms` once when
/// nothing is there, because pa_stream_peek hands out chunks of its own size: how many bytes (0 after a
/// wait that brought nothing), or -1 and the error code. Holes in the stream come as silence.
int prpulse_record_read(prpulse_session *session, void *data, size_t bytes, int timeout_ms, int *error);

/// How long ago the next sample to be read was captured, in microseconds (pa_stream_get_latency on the
/// record stream: the source's latency and what waits in the server and here, less the part of a
/// chunk already read, as pa_simple_get_latency does; negative on a monitor whose sink has not played
/// it yet): 0, or -1 and the error code.
int prpulse_record_latency(prpulse_session *session, int64_t *latency_us, int *error);

/// Closes the record stream (no-op without one).
void prpulse_record_close(prpulse_session *session);

// MARK: - The live output: a playback stream on a session of its own, every call on one thread (the
// audio thread), so a write reaches the server from the thread that made it. pa_simple hands each
// write to a thread of libpulse's and waits for it: five wake-ups a write, about 1,700 a second for
// a live output (docs/LIVE.md, "The listener's output").

/// An open playback stream and its connection.
typedef struct prpulse_stream prpulse_stream;

/// Opens a playback stream of interleaved signed 16-bit little-endian stereo at 48 kHz on
/// `server` (NULL: the default, as $PULSE_SERVER says) and `sink` (NULL: the default), named
/// `application` / `stream_name` in the server's lists, asking for a buffer of `buffer_us`, a
/// request every `request_us`, and playback to start (and restart after running dry) once it holds
/// `start_us` (0: libpulse's default, the whole buffer), with pa_simple's timing flags, waiting at
/// most 5 s for the server to start it (PA_ERR_TIMEOUT: under PipeWire, no session manager links
/// it). NULL and libpulse's error code in `error` when it cannot.
prpulse_stream *prpulse_open(const char *server, const char *application, const char *sink,
                             const char *stream_name, uint32_t buffer_us, uint32_t request_us, uint32_t start_us,
                             int *error);

/// Writes `bytes` of PCM, waiting (as pa_simple_write) while the stream's buffer has no room, and
/// sends them before it returns: 0, or -1 and the error code in `error`.
int prpulse_write(prpulse_stream *stream, const void *data, size_t bytes, int *error);

/// How long until a sample written now is heard, in microseconds (as pa_simple_get_latency: what
/// the stream holds plus the sink's own latency, interpolated between the server's timing reports,
/// after taking in what the server sent meanwhile; 0 when negative): 0, or -1 and the error code.
int prpulse_latency(prpulse_stream *stream, uint64_t *latency_us, int *error);

/// Waits `timeout_us`, taking in what the server sends meanwhile (its requests, its timing
/// reports): 0, or -1 and the error code when the stream or the connection failed.
int prpulse_sleep(prpulse_stream *stream, uint32_t timeout_us, int *error);

/// Closes the stream (what it still holds is dropped) and its connection.
void prpulse_close(prpulse_stream *stream);

#endif
