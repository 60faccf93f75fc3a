// MPRIS 2 on sd-bus, for what Swift cannot write: the SD_BUS_VTABLE macros (C only) and sd-bus's
// variadic calls. Two halves: the object a node serves (`prmpris`: Swift supplies the property
// values, appended to the reply with sd_bus_message_append_basic and friends, and takes the method
// calls, through function pointers and an opaque context), and a client that follows another
// player (`prmpris_follower`, a live DJ's `--live-player`: Swift reads the replies' variants itself
// with the non-variadic sd_bus_message_peek_type/enter_container/read_basic).
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

/// A live DJ's connection to the session bus to follow other players.
typedef struct prmpris_follower prmpris_follower;
/// A signal that may change what the followed players say: `member` is "PropertiesChanged" (of
/// org.mpris.MediaPlayer2.Player), "Seeked" or "NameOwnerChanged" (of an org.mpris.MediaPlayer2.*
/// name); `sender` the unique name that sent it. Called on the thread in ``prmpris_follower_process``.
typedef void (*prmpris_signal_fn)(void *context, const char *member, const char *sender);

/// Connects to the bus at `address` and subscribes to the signals above. NULL with `*error` a
/// negative errno on failure.
prmpris_follower *prmpris_follower_open(const char *address, void *context, prmpris_signal_fn signal, int *error);
/// As ``prmpris_process``: waits (at most `timeout_ms`) for traffic or a wake-up, then dispatches
/// the signals. < 0: the bus is gone.
int prmpris_follower_process(prmpris_follower *follower, int timeout_ms);
/// Wakes ``prmpris_follower_process`` from another thread.
void prmpris_follower_wake(prmpris_follower *follower);
/// The bus's names (ListNames) as a NULL-terminated array the caller frees with
/// ``prmpris_free_strv``; < 0 on error.
int prmpris_follower_list_names(prmpris_follower *follower, char ***names);
void prmpris_free_strv(char **names);
/// Properties.GetAll("org.mpris.MediaPlayer2.Player") of `name`: `*reply` (unref it with
/// sd_bus_message_unref) is positioned at its `a{sv}`. Waits at most `timeout_us`; < 0 on error.
int prmpris_follower_get_all(prmpris_follower *follower, const char *name, uint64_t timeout_us,
                             sd_bus_message **reply);
/// Calls `member` ("Next", "Previous", "Play", "Pause": no arguments) of `name`'s
/// org.mpris.MediaPlayer2.Player, waiting at most `timeout_us` for the answer; < 0 on error, with
/// the error's name in `error_name` when the player sent one.
int prmpris_follower_call(prmpris_follower *follower, const char *name, const char *member, uint64_t timeout_us,
                          char *error_name, size_t error_size);
/// Calls SetPosition(track_id, position_us) of `name`'s org.mpris.MediaPlayer2.Player (`track_id`
/// an object path), as prmpris_follower_call does.
int prmpris_follower_set_position(prmpris_follower *follower, const char *name, const char *track_id,
                                  int64_t position_us, uint64_t timeout_us, char *error_name, size_t error_size);
/// Closes the bus and frees everything.
void prmpris_follower_close(prmpris_follower *follower);

#endif
