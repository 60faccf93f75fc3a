#!/usr/bin/env python3
"""Writes a small music library whose tags are attacks on the web page, for the browser tests.

    python3 hostile_library.py DIR [SECONDS]

Each file is a WAV (a quiet sine, SECONDS long, default 60) with an ID3v2.4 title and artist in
its `id3 ` chunk (which TagLib reads): script tags, an <img onerror>, a javascript: URL and quotes, then two plain
tracks to request. Every string is plain text to partyradio; the page must show it as text.
"""
import math
import os
import struct
import sys

TRACKS = [
    ("<script>window.__pwned=1</script>", "<img src=x onerror=\"window.__pwned=1\">"),
    ("javascript:window.__pwned=1", "Evil \"Quotes\" & <b>bold</b>"),
    ("Blue Hour", "Sine Society"),
    ("Minor Stroll", "Sine Society"),
]


def chunk(ident, payload):
    if len(payload) % 2:
        payload += b"\0"
    return ident + struct.pack("<I", len(payload)) + payload


def syncsafe(n):
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])


def id3(title, artist):
    """An ID3v2.4 tag with UTF-8 TIT2 and TPE1 frames."""
    frames = b""
    for ident, text in ((b"TIT2", title), (b"TPE1", artist)):
        payload = b"\x03" + text.encode("utf-8")
        frames += ident + syncsafe(len(payload)) + b"\0\0" + payload
    return b"ID3\x04\x00\x00" + syncsafe(len(frames)) + frames


def wav(seconds, frequency, title, artist):
    rate = 8000
    frames = b"".join(
        struct.pack("<h", int(3000 * math.sin(2 * math.pi * frequency * i / rate))) for i in range(rate * seconds))
    fmt = chunk(b"fmt ", struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16))
    body = b"WAVE" + fmt + chunk(b"data", frames) + chunk(b"id3 ", id3(title, artist))
    return b"RIFF" + struct.pack("<I", len(body)) + body


def main():
    folder = sys.argv[1]
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    os.makedirs(folder, exist_ok=True)
    for index, (title, artist) in enumerate(TRACKS):
        with open(os.path.join(folder, "%02d.wav" % (index + 1)), "wb") as f:
            f.write(wav(seconds, 330 + 110 * index, title, artist))


if __name__ == "__main__":
    main()
