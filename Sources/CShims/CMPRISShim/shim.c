#define _GNU_SOURCE
#include "CMPRISShim.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PRMPRIS_PATH "/org/mpris/MediaPlayer2"
#define PRMPRIS_ROOT "org.mpris.MediaPlayer2"
#define PRMPRIS_PLAYER "org.mpris.MediaPlayer2.Player"

struct prmpris {
    sd_bus *bus;
    sd_bus_slot *root_slot;
    sd_bus_slot *player_slot;
    int wake[2];
    void *context;
    prmpris_get_fn get;
    prmpris_call_fn call;
};

static int get_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)error;
    prmpris *mpris = userdata;
    return mpris->get(mpris->context, interface, property, reply);
}

static int set_volume(sd_bus *bus, const char *path, const char *interface, const char *property,
                      sd_bus_message *value, void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)error;
    prmpris *mpris = userdata;
    double volume = 0;
    int r = sd_bus_message_read(value, "d", &volume);
    if (r < 0) return r;
    mpris->call(mpris->context, "SetVolume", 0, "", volume);
    return 1;
}

static int method(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    prmpris *mpris = userdata;
    const char *member = sd_bus_message_get_member(m);
    int64_t offset = 0;
    const char *text = "";
    int r = 0;
    if (strcmp(member, "Seek") == 0) {
        r = sd_bus_message_read(m, "x", &offset);
    } else if (strcmp(member, "SetPosition") == 0) {
        r = sd_bus_message_read(m, "ox", &text, &offset);
    } else if (strcmp(member, "OpenUri") == 0) {
        r = sd_bus_message_read(m, "s", &text);
    }
    if (r < 0) return r;
    mpris->call(mpris->context, member, offset, text, 0);
    return sd_bus_reply_method_return(m, "");
}

#define PROP(name, sig) SD_BUS_PROPERTY(name, sig, get_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)
#define CONST_PROP(name, sig) SD_BUS_PROPERTY(name, sig, get_property, 0, SD_BUS_VTABLE_PROPERTY_CONST)

static const sd_bus_vtable root_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Raise", "", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Quit", "", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    CONST_PROP("CanQuit", "b"),
    CONST_PROP("CanRaise", "b"),
    CONST_PROP("HasTrackList", "b"),
    CONST_PROP("Identity", "s"),
    CONST_PROP("SupportedUriSchemes", "as"),
    CONST_PROP("SupportedMimeTypes", "as"),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable player_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Next", "", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Previous", "", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Pause", "", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("PlayPause", "", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Stop", "", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Play", "", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Seek", "x", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetPosition", "ox", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("OpenUri", "s", "", method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("Seeked", "x", 0),
    PROP("PlaybackStatus", "s"),
    PROP("Rate", "d"),
    PROP("Metadata", "a{sv}"),
    SD_BUS_WRITABLE_PROPERTY("Volume", "d", get_property, set_volume, 0,
                             SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE | SD_BUS_VTABLE_UNPRIVILEGED),
    // The position moves all the time: never announced (MPRIS says so), read when asked.
    SD_BUS_PROPERTY("Position", "x", get_property, 0, 0),
    PROP("MinimumRate", "d"),
    PROP("MaximumRate", "d"),
    PROP("CanGoNext", "b"),
    PROP("CanGoPrevious", "b"),
    PROP("CanPlay", "b"),
    PROP("CanPause", "b"),
    PROP("CanSeek", "b"),
    CONST_PROP("CanControl", "b"),
    SD_BUS_VTABLE_END,
};

void prmpris_close(prmpris *mpris) {
    if (!mpris) return;
    sd_bus_slot_unref(mpris->root_slot);
    sd_bus_slot_unref(mpris->player_slot);
    if (mpris->bus) sd_bus_flush_close_unref(mpris->bus);
    if (mpris->wake[0] >= 0) close(mpris->wake[0]);
    if (mpris->wake[1] >= 0) close(mpris->wake[1]);
    free(mpris);
}

prmpris *prmpris_open(const char *address, void *context, prmpris_get_fn get, prmpris_call_fn call,
                      char *name_out, size_t name_size, int *error) {
    if (name_size > 0) name_out[0] = 0;
    prmpris *mpris = calloc(1, sizeof *mpris);
    if (!mpris) { *error = -ENOMEM; return NULL; }
    mpris->wake[0] = mpris->wake[1] = -1;
    mpris->context = context;
    mpris->get = get;
    mpris->call = call;
    int r = pipe2(mpris->wake, O_CLOEXEC | O_NONBLOCK);
    if (r < 0) { r = -errno; goto fail; }
    r = sd_bus_new(&mpris->bus);
    if (r < 0) goto fail;
    r = sd_bus_set_address(mpris->bus, address);
    if (r < 0) goto fail;
    r = sd_bus_set_bus_client(mpris->bus, 1);
    if (r < 0) goto fail;
    r = sd_bus_start(mpris->bus);
    if (r < 0) goto fail;
    r = sd_bus_add_object_vtable(mpris->bus, &mpris->root_slot, PRMPRIS_PATH, PRMPRIS_ROOT, root_vtable, mpris);
    if (r < 0) goto fail;
    r = sd_bus_add_object_vtable(mpris->bus, &mpris->player_slot, PRMPRIS_PATH, PRMPRIS_PLAYER, player_vtable, mpris);
    if (r < 0) goto fail;
    char name[128];
    snprintf(name, sizeof name, "org.mpris.MediaPlayer2.partyradio");
    r = sd_bus_request_name(mpris->bus, name, 0);
    if (r == -EEXIST) {
        snprintf(name, sizeof name, "org.mpris.MediaPlayer2.partyradio.instance%ld", (long)getpid());
        r = sd_bus_request_name(mpris->bus, name, 0);
    }
    if (r < 0) goto fail;
    snprintf(name_out, name_size, "%s", name);
    return mpris;
fail:
    *error = r;
    prmpris_close(mpris);
    return NULL;
}

// Handles everything waiting on `bus`, waits (at most `timeout_ms`, or sd-bus's own timeout) for
// more or for a byte on `wake`, and handles that. Shared by the served object and the follower.
static int process_bus(sd_bus *bus, int wake, int timeout_ms) {
    for (;;) {  // everything already waiting first
        int r = sd_bus_process(bus, NULL);
        if (r < 0) return r;
        if (r == 0) break;
    }
    int events = sd_bus_get_events(bus);
    if (events < 0) return events;
    uint64_t until = 0;
    int timeout = timeout_ms;
    if (sd_bus_get_timeout(bus, &until) >= 0 && until != UINT64_MAX) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t now = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
        uint64_t wait_ms = until > now ? (until - now + 999) / 1000 : 0;
        if (wait_ms < (uint64_t)timeout) timeout = (int)wait_ms;
    }
    struct pollfd fds[2] = {
        {.fd = sd_bus_get_fd(bus), .events = (short)events},
        {.fd = wake, .events = POLLIN},
    };
    int r = poll(fds, 2, timeout);
    if (r < 0 && errno != EINTR) return -errno;
    if (fds[1].revents) {
        char buffer[64];
        while (read(wake, buffer, sizeof buffer) > 0) {}
    }
    for (;;) {
        r = sd_bus_process(bus, NULL);
        if (r < 0) return r;
        if (r == 0) break;
    }
    return 0;
}

int prmpris_process(prmpris *mpris, int timeout_ms) { return process_bus(mpris->bus, mpris->wake[0], timeout_ms); }

void prmpris_wake(prmpris *mpris) {
    char byte = 1;
    ssize_t written = write(mpris->wake[1], &byte, 1);  // a full pipe already means "wake up"
    (void)written;
}

int prmpris_emit_player_changed(prmpris *mpris, char **names) {
    return sd_bus_emit_properties_changed_strv(mpris->bus, PRMPRIS_PATH, PRMPRIS_PLAYER, names);
}

int prmpris_emit_seeked(prmpris *mpris, int64_t position_us) {
    return sd_bus_emit_signal(mpris->bus, PRMPRIS_PATH, PRMPRIS_PLAYER, "Seeked", "x", position_us);
}

// MARK: The follower (a live DJ's --live-player)

struct prmpris_follower {
    sd_bus *bus;
    int wake[2];
    void *context;
    prmpris_signal_fn signal;
};

// Every subscribed signal: NameOwnerChanged only for org.mpris.MediaPlayer2.* (the match says so),
// PropertiesChanged only for the Player interface (its first argument, which the match checks too).
static int follower_signal(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    prmpris_follower *follower = userdata;
    const char *member = sd_bus_message_get_member(m);
    const char *sender = sd_bus_message_get_sender(m);
    if (member) follower->signal(follower->context, member, sender ? sender : "");
    return 0;
}

void prmpris_follower_close(prmpris_follower *follower) {
    if (!follower) return;
    if (follower->bus) sd_bus_flush_close_unref(follower->bus);  // also frees the floating match slots
    if (follower->wake[0] >= 0) close(follower->wake[0]);
    if (follower->wake[1] >= 0) close(follower->wake[1]);
    free(follower);
}

prmpris_follower *prmpris_follower_open(const char *address, void *context, prmpris_signal_fn signal, int *error) {
    prmpris_follower *follower = calloc(1, sizeof *follower);
    if (!follower) { *error = -ENOMEM; return NULL; }
    follower->wake[0] = follower->wake[1] = -1;
    follower->context = context;
    follower->signal = signal;
    static const char *matches[] = {
        "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
        "path='" PRMPRIS_PATH "',arg0='" PRMPRIS_PLAYER "'",
        "type='signal',interface='" PRMPRIS_PLAYER "',member='Seeked',path='" PRMPRIS_PATH "'",
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',"
        "arg0namespace='" PRMPRIS_ROOT "'",
    };
    int r = pipe2(follower->wake, O_CLOEXEC | O_NONBLOCK);
    if (r < 0) { r = -errno; goto fail; }
    r = sd_bus_new(&follower->bus);
    if (r < 0) goto fail;
    r = sd_bus_set_address(follower->bus, address);
    if (r < 0) goto fail;
    r = sd_bus_set_bus_client(follower->bus, 1);
    if (r < 0) goto fail;
    r = sd_bus_start(follower->bus);
    if (r < 0) goto fail;
    for (size_t i = 0; i < sizeof matches / sizeof matches[0]; i++) {
        r = sd_bus_add_match(follower->bus, NULL, matches[i], follower_signal, follower);
        if (r < 0) goto fail;
    }
    return follower;
fail:
    *error = r;
    prmpris_follower_close(follower);
    return NULL;
}

int prmpris_follower_process(prmpris_follower *follower, int timeout_ms) {
    return process_bus(follower->bus, follower->wake[0], timeout_ms);
}

void prmpris_follower_wake(prmpris_follower *follower) {
    char byte = 1;
    ssize_t written = write(follower->wake[1], &byte, 1);  // a full pipe already means "wake up"
    (void)written;
}

void prmpris_free_strv(char **names) {
    if (!names) return;
    for (char **name = names; *name; name++) free(*name);
    free(names);
}

int prmpris_follower_list_names(prmpris_follower *follower, char ***names) {
    *names = NULL;
    sd_bus_message *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_call_method(follower->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "ListNames", &error, &reply, "");
    sd_bus_error_free(&error);
    if (r < 0) return r;
    r = sd_bus_message_read_strv(reply, names);
    sd_bus_message_unref(reply);
    return r;
}

int prmpris_follower_get_all(prmpris_follower *follower, const char *name, uint64_t timeout_us,
                             sd_bus_message **reply) {
    *reply = NULL;
    sd_bus_message *call = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_message_new_method_call(follower->bus, &call, name, PRMPRIS_PATH,
                                           "org.freedesktop.DBus.Properties", "GetAll");
    if (r >= 0) r = sd_bus_message_append(call, "s", PRMPRIS_PLAYER);
    if (r >= 0) r = sd_bus_call(follower->bus, call, timeout_us, &error, reply);
    sd_bus_message_unref(call);
    sd_bus_error_free(&error);
    return r;
}

/// Calls `member` with its arguments appended (`track_id` and `position_us` for SetPosition; none
/// when `track_id` is NULL).
static int follower_call(prmpris_follower *follower, const char *name, const char *member, const char *track_id,
                         int64_t position_us, uint64_t timeout_us, char *error_name, size_t error_size) {
    if (error_size > 0) error_name[0] = 0;
    sd_bus_message *call = NULL;
    sd_bus_message *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_message_new_method_call(follower->bus, &call, name, PRMPRIS_PATH, PRMPRIS_PLAYER, member);
    if (r >= 0 && track_id) r = sd_bus_message_append(call, "ox", track_id, position_us);
    if (r >= 0) r = sd_bus_call(follower->bus, call, timeout_us, &error, &reply);
    if (r < 0 && error.name && error_size > 0) snprintf(error_name, error_size, "%s", error.name);
    sd_bus_message_unref(call);
    sd_bus_message_unref(reply);
    sd_bus_error_free(&error);
    return r;
}

int prmpris_follower_call(prmpris_follower *follower, const char *name, const char *member, uint64_t timeout_us,
                          char *error_name, size_t error_size) {
    return follower_call(follower, name, member, NULL, 0, timeout_us, error_name, error_size);
}

int prmpris_follower_set_position(prmpris_follower *follower, const char *name, const char *track_id,
                                  int64_t position_us, uint64_t timeout_us, char *error_name, size_t error_size) {
    return follower_call(follower, name, "SetPosition", track_id, position_us, timeout_us, error_name, error_size);
}
