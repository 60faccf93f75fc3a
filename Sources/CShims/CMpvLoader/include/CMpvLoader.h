// libmpv, loaded at first use: only the commands that play pay for it.
//
// libmpv and the ~190 libraries it needs (ffmpeg, PipeWire, X11, …) cost every command about
// 80 ms of dynamic linking before main when the binary links them (docs/BINARY.md, "Linked, and
// loaded when used"). The binary therefore does not link libmpv: prmpv_load dlopen()s it the
// first time a player is made and fills a table of function pointers with dlsym; the prmpv_
// wrappers below call through that table. mpv's own header (libmpv-dev) still gives the types,
// enums and structs.
#ifndef PARTYRADIO_CMPV_LOADER_H
#define PARTYRADIO_CMPV_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <mpv/client.h>
#include <mpv/stream_cb.h>

/// The library's soname (Debian 12: package libmpv2).
#define PRMPV_SONAME "libmpv.so.2"

/// Loads libmpv from `soname` (NULL: PRMPV_SONAME) and resolves every function below. 0 on success
/// (also when a library is already loaded: the first one loaded stays in use; a later call with
/// another name still checks that that name loads); -1 on failure, with the dynamic loader's reason
/// (a missing file, a missing symbol) in `error`. Thread-safe.
int prmpv_load(const char *soname, char *error, size_t length);

/// Whether prmpv_load has succeeded in this process.
int prmpv_is_loaded(void);

/// Sets glibc's mmap threshold to `bytes` (mallopt(M_MMAP_THRESHOLD), which also turns its dynamic
/// adjustment off); 1 on success. Here because Swift's Glibc module does not export <malloc.h>.
int prmpv_set_mmap_threshold(int bytes);

// The mpv client API calls partyradio makes, through the loaded table. Call them only after
// prmpv_load succeeded (prmpv_error_string alone is safe before: it then says so).
unsigned long prmpv_client_api_version(void);
const char *prmpv_error_string(int error);
void prmpv_free(void *data);
mpv_handle *prmpv_create(void);
int prmpv_initialize(mpv_handle *ctx);
void prmpv_terminate_destroy(mpv_handle *ctx);
int prmpv_set_option_string(mpv_handle *ctx, const char *name, const char *data);
int prmpv_command(mpv_handle *ctx, const char **args);
int prmpv_set_property(mpv_handle *ctx, const char *name, mpv_format format, void *data);
int prmpv_get_property(mpv_handle *ctx, const char *name, mpv_format format, void *data);
char *prmpv_get_property_string(mpv_handle *ctx, const char *name);
mpv_event *prmpv_wait_event(mpv_handle *ctx, double timeout);
void prmpv_set_wakeup_callback(mpv_handle *ctx, void (*cb)(void *d), void *d);
// The player's own protocol (a cached track read while it downloads); see stream_cb.h.
int prmpv_stream_cb_add_ro(mpv_handle *ctx, const char *protocol, void *user_data, mpv_stream_cb_open_ro_fn open_fn);

// PulseAudio's request size. The sound server asks a stream for more audio every `minreq` bytes;
// mpv's pulse output leaves it to the server, whose default is 20 ms, and with
// `pulse-latency-hacks` each request costs a round trip to the server for the stream's delay: about
// 850 wake-ups a second for a playing listener (docs/MEDIA.md, "The request size"). This file's
// pulse.c defines libpulse's pa_stream_connect_playback and pa_stream_get_buffer_attr in the
// executable, so that libmpv's calls reach them first: the first asks for a larger minreq, the
// second notes what the server granted and tells mpv a buffer four requests long
// (``prmpv_pulse_reported_attr``). With a permille of 0 the calls pass through unchanged.

/// libpulse's pa_buffer_attr (pulse/def.h, unchanged since 0.9): bytes, (uint32_t)-1 for "the
/// server's default".
struct prmpv_pa_buffer_attr {
    uint32_t maxlength, tlength, prebuf, minreq, fragsize;
};

/// The request size asked for from now on, as a share of the stream's buffer (`tlength`) in
/// thousandths; at most 500 (half the buffer), 0 for the server's default. Process-wide.
void prmpv_set_pulse_request(unsigned permille);

/// `attr` with its minreq set to `permille` thousandths of its tlength (at most half, rounded down
/// to 8 bytes), when the caller left minreq to the server and set a tlength; else `attr` unchanged.
struct prmpv_pa_buffer_attr prmpv_pulse_request_attr(struct prmpv_pa_buffer_attr attr, unsigned permille);

/// The buffer mpv reads back once the request size was set (the granted `attr`): its tlength four
/// requests long, but at most `most` bytes, and never shorter than granted. mpv 0.35's output
/// thread wakes a quarter of that buffer after its last wake-up even when nothing was requested
/// (audio/out/buffer.c, "fallback to guessing"): with a request every 50 ms of a 100 ms buffer it
/// woke twice between requests and found nothing to write. Read as four requests, that fallback
/// comes about when the next request does. mpv reads the buffer for one other thing: its own queue
/// is at least that long (audio/out/ao.c: the longer of it and `audio-buffer`), so `most` is
/// `audio-buffer` (``prmpv_mpv_queue_us``) in bytes, and the queue stays as it was.
struct prmpv_pa_buffer_attr prmpv_pulse_reported_attr(struct prmpv_pa_buffer_attr attr, uint32_t most);

/// mpv's `audio-buffer` default (0.2 s), in microseconds: what ``prmpv_pulse_reported_attr`` may
/// report at most.
static const uint64_t prmpv_mpv_queue_us = 200000;

/// 1 and the buffer and request the server granted the last playback stream, in microseconds; 0
/// when no stream has been set up in this process.
int prmpv_pulse_granted(uint64_t *buffer_us, uint64_t *request_us);

// PulseAudio's timing reports. With `pulse-latency-hacks` mpv asks the server for a fresh timing
// report (pa_stream_update_timing_info, then a wait for the answer) on every query of the stream's
// state: on every request from the server and every time mpv's core reads the delay, a hundred or
// more round trips a second. pulse.c also defines pa_stream_update_timing_info and
// pa_stream_get_timing_info: for the stream mpv opened without libpulse's own timing updates, an
// update asked for within `milliseconds` of the last one that answered is that answered one again
// (no round trip), and the report read back says how long ago it was taken (`transport_usec`, which
// mpv subtracts, becomes the time since the server took it while the stream plays), so the delay
// mpv works out is the one now, not the one then. 0: every update is a round trip, and reports pass
// unchanged (mpv's own behaviour).

/// libpulse's pa_timing_info (pulse/def.h, unchanged since 0.9).
struct prmpv_pa_timing_info {
    struct timeval timestamp;
    int synchronized_clocks;
    uint64_t sink_usec, source_usec, transport_usec;
    int playing, write_index_corrupt;
    int64_t write_index;
    int read_index_corrupt;
    int64_t read_index;
    uint64_t configured_sink_usec, configured_source_usec;
    int64_t since_underrun;
};

/// How long an answered timing update is reused, from now on; 0 for never. Process-wide.
void prmpv_set_pulse_timing_reuse(unsigned milliseconds);

/// `info` as read back at `now_us` (microseconds of the same clock as its timestamp,
/// gettimeofday's): while it says the stream plays, transport_usec is the time since the server
/// took it (0 if the timestamp is ahead of now); otherwise `info` unchanged.
struct prmpv_pa_timing_info prmpv_pulse_timing_at(struct prmpv_pa_timing_info info, int64_t now_us);

/// Whether an update asked for `age_us` after the last answered one may be that one again, given
/// the reuse limit and the report libpulse holds now (its indexes corrupt after a cork or flush).
int prmpv_pulse_timing_reusable(uint64_t age_us, uint64_t max_age_us, int answered, int indexes_corrupt);

/// Timing updates asked for by mpv so far in this process: sent to the server, and answered from
/// the last one.
void prmpv_pulse_timing_counts(uint64_t *sent, uint64_t *reused);

// The stream's volume at the server. mpv's own volume (`volume`) scales the audio as it leaves
// mpv's queue for the sound server's buffer (`pulse-buffer`, 100 ms by default), so a change is
// heard only once that buffer has played out: 79-103 ms measured at a null sink. The volume of the
// stream at the server (mpv's `ao-volume`) scales what the server mixes, so a change is heard at
// once; but mpv opens its stream at the server's default volume each time it opens its output. With
// a stream volume set, pulse.c's pa_stream_connect_playback notes each stream mpv opens (mpv's
// flags: started corked, not monotonic; libpulse-simple's streams, the live player's, never start
// corked), and its pa_stream_cork gives such a stream that volume just before it is first uncorked:
// the server takes the volume before it plays a sample.

/// The volume (0-100, mpv's scale, cubic as PulseAudio's) each playback stream mpv opens from now on
/// starts with; -1 for the server's default (mpv's own behaviour). Process-wide.
void prmpv_set_pulse_stream_volume(int volume);

/// libpulse's pa_volume_t for mpv's `volume` (0-100): PA_VOLUME_NORM (0x10000) at 100, linear in
/// between, as mpv's pulse output converts `ao-volume`; clamped to 0-100.
uint32_t prmpv_pulse_volume(int volume);

/// Playback streams given their starting volume so far in this process.
uint64_t prmpv_pulse_stream_volumes_set(void);

#endif
