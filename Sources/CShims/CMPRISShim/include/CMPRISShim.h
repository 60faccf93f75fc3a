// The MPRIS 2 object on sd-bus, for what Swift cannot write: the SD_BUS_VTABLE macros (C only)
// and sd-bus's variadic calls. Swift supplies the property values (appended to the reply with
// sd_bus_message_append_basic and friends) and takes the method calls, through function
// pointers and an opaque context.
#ifndef PARTYRADIO_CMPRIS_SHIM_H
#define PARTYRADIO_CMPRIS_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/// Appends the value of `property` of `interface` ("org.mpris.MediaPlayer2" or
/// "org.mpris.MediaPlayer2.Player") to `reply` (its signature is the property's); < 0 on error.
typedef int (*prmpris_get_fn)(void *context, const char *interface, const char *property, sd_bus_message *reply);
/// A method call (`member` as MPRIS names it: "PlayPause", "Seek", …), with its arguments:
/// `offset_us` for Seek and SetPosition (its position), `text` for SetPosition (the track's
/// object path) and OpenUri; `number` for the Volume property, set as "SetVolume".
typedef void (*prmpris_call_fn)(void *context, const char *member, int64_t offset_us, const char *text,
                                double number);

typedef struct prmpris prmpris;

/// Connects to the bus at `address`, serves /org/mpris/MediaPlayer2 and takes the name
/// `org.mpris.MediaPlayer2.partyradio` or, when that is taken, `….partyradio.instance<pid>`.
/// Returns NULL with `*error` a negative errno (and `name_out` empty) on failure; the name taken
/// otherwise.
prmpris *prmpris_open(const char *address, void *context, prmpris_get_fn get, prmpris_call_fn call,
                      char *name_out, size_t name_size, int *error);
/// Waits (at most `timeout_ms`) for bus traffic or ``prmpris_wake``, then handles every waiting
/// message (getters and calls run here, on the caller's thread). < 0: the bus is gone.
int prmpris_process(prmpris *mpris, int timeout_ms);
/// Wakes ``prmpris_process`` from another thread (a write to a pipe: thread-safe).
void prmpris_wake(prmpris *mpris);
/// PropertiesChanged for the Player's properties named in `names` (NULL-terminated).
int prmpris_emit_player_changed(prmpris *mpris, char **names);
/// The Player's Seeked signal.
int prmpris_emit_seeked(prmpris *mpris, int64_t position_us);
/// Releases the name, closes the bus and frees everything.
void prmpris_close(prmpris *mpris);

#endif
