#!/usr/bin/env python3
"""An MPRIS player that answers nonsense, for LiveMPRISLANTests: it owns
org.mpris.MediaPlayer2.nonsense on $DBUS_SESSION_BUS_ADDRESS and answers Properties.GetAll of
org.mpris.MediaPlayer2.Player with one stage after another. Stage 0: every key but the title (last)
of the wrong type or none MPRIS knows (a byte array, an array of variants for the artist, nested
dictionaries, a struct, a 1 MB string, the status an integer, the position a dictionary). Stage 1: a title with an escape
sequence, a bidi override and 300 accented letters, 100 artists, a length of 2^64 - 1, a track ID
of 600 bytes, a script URL as artwork, a negative position. Stage 2 (with COVER given): a plain
track whose artwork is the file COVER (file://). Stage 3: a plain track whose "artwork" is
/etc/passwd. Each line "next" on stdin moves to the next stage and announces it with
PropertiesChanged. Prints "ready" once the name is taken.

usage: mpris_nonsense_player.py [COVER]
"""
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

PATH = "/org/mpris/MediaPlayer2"
PLAYER = "org.mpris.MediaPlayer2.Player"
PROPERTIES = "org.freedesktop.DBus.Properties"


def stages():
    wrong = dbus.Dictionary(
        {
            "x-bytes": dbus.ByteArray(b"Bytes Title"),
            "xesam:artist": dbus.Array([dbus.String("A", variant_level=1), dbus.Int32(3, variant_level=1)], signature="v"),
            "xesam:album": dbus.Dictionary(
                {"nested": dbus.Dictionary({"deeper": dbus.Array([dbus.Int64(1)], signature="x")}, signature="sv")},
                signature="sv"),
            "mpris:length": dbus.String("forever"),
            "mpris:trackid": dbus.Int32(7),
            "mpris:artUrl": dbus.Array([dbus.ByteArray(b"\x01")], signature="ay"),
            "x-huge": dbus.String("x" * 1_000_000),
            "x-struct": dbus.Struct((dbus.Int32(1), dbus.String("s"), dbus.Double(2.0)), signature="isd"),
            "xesam:title": dbus.String("Plain Zero"),
        },
        signature="sv")
    yield wrong, dbus.Int32(1), dbus.Dictionary({"at": dbus.Int64(3)}, signature="sv")
    odd = dbus.Dictionary(
        {
            "xesam:title": dbus.String("\x1b[31mRed\u202e Title " + "\u00e9" * 300),
            "xesam:artist": dbus.Array(["\x07Bell"] * 100, signature="s"),
            "mpris:length": dbus.UInt64(2**64 - 1),
            "mpris:trackid": dbus.ObjectPath("/t/" + "a" * 600),
            "mpris:artUrl": dbus.String("javascript:alert(1)"),
        },
        signature="sv")
    yield odd, dbus.String("Playing"), dbus.Int64(-5)
    if len(sys.argv) > 1:
        for title, art in (("Cover Song", "file://" + sys.argv[1]), ("Secret Song", "file:///etc/passwd")):
            plain = dbus.Dictionary(
                {
                    "xesam:title": dbus.String(title),
                    "xesam:artist": dbus.Array(["Cover Artist"], signature="s"),
                    "mpris:trackid": dbus.ObjectPath("/t/" + title.split()[0].lower()),
                    "mpris:artUrl": dbus.String(art),
                },
                signature="sv")
            yield plain, dbus.String("Playing"), dbus.Int64(0)


class Player(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, PATH)
        self.stages = list(stages())
        self.stage = 0

    def properties(self):
        metadata, status, position = self.stages[self.stage]
        return dbus.Dictionary({"Metadata": metadata, "PlaybackStatus": status, "Position": position}, signature="sv")

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties() if interface == PLAYER else dbus.Dictionary({}, signature="sv")

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties()[name]

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def next(self):
        self.stage = min(self.stage + 1, len(self.stages) - 1)
        metadata, status, _ = self.stages[self.stage]
        self.PropertiesChanged(PLAYER, dbus.Dictionary({"Metadata": metadata, "PlaybackStatus": status},
                                                       signature="sv"), dbus.Array([], signature="s"))


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    name = dbus.service.BusName("org.mpris.MediaPlayer2.nonsense", bus)
    player = Player(bus)
    loop = GLib.MainLoop()

    def command(source, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        if line.strip() == "next":
            player.next()
            print("stage", player.stage, flush=True)
        return True

    GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, command)
    print("ready", name.get_name(), flush=True)
    loop.run()


if __name__ == "__main__":
    main()
