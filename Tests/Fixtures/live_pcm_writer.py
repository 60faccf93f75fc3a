#!/usr/bin/env python3
"""Writes raw PCM in Snapcast's pipe format (48000:16:2, little-endian) into a pipe at real-time
pace, 100 ms ahead (as a player's output buffer is: a stall of this script on a loaded machine
shorter than that leaves the reader something to read): a 440 Hz tone with a click (a full-scale
square burst) every `click_ms`, in 10 ms writes, for `seconds`; then closes the pipe (its writer
goes away).

A PATH ending in .wav gets the same PCM as a WAV file, at once (a player's music file).

usage: live_pcm_writer.py PATH SECONDS [CLICK_MS]
"""
import math
import struct
import sys
import time
import wave

path, seconds = sys.argv[1], float(sys.argv[2])
click_ms = int(sys.argv[3]) if len(sys.argv) > 3 else 500
rate, chunk = 48000, 480  # 10 ms
total = int(rate * seconds)


def pcm(first, end):
    samples = []
    for i in range(first, end):
        ms = i * 1000 // rate
        if ms % click_ms < 5:
            value = 30000 if (i // 24) % 2 == 0 else -30000
        else:
            value = int(8000 * math.sin(2 * math.pi * 440 * i / rate))
        samples += [value, value]
    return struct.pack("<%dh" % len(samples), *samples)


if path.endswith(".wav"):
    with wave.open(path, "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm(0, total))
    print("wrote", total, flush=True)
    sys.exit(0)
with open(path, "wb", buffering=0) as pipe:
    print("open", flush=True)
    start = time.monotonic()
    n = 0
    while n < total:
        pipe.write(pcm(n, min(n + chunk, total)))
        n += chunk
        delay = start + n / rate - 0.1 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
print("closed", n, flush=True)
