#!/usr/bin/env python3
"""Writes raw PCM in Snapcast's pipe format (48000:16:2, little-endian) into a pipe at real-time
pace, 100 ms ahead (as a player's output buffer is: a stall of this script on a loaded machine
shorter than that leaves the reader something to read): a 440 Hz tone with a click (a full-scale
square burst) every `click_ms`, in 10 ms writes, for `seconds`; then closes the pipe (its writer
goes away).

usage: live_pcm_writer.py PATH SECONDS [CLICK_MS]
"""
import math
import struct
import sys
import time

path, seconds = sys.argv[1], float(sys.argv[2])
click_ms = int(sys.argv[3]) if len(sys.argv) > 3 else 500
rate, chunk = 48000, 480  # 10 ms
total = int(rate * seconds)
with open(path, "wb", buffering=0) as pipe:
    print("open", flush=True)
    start = time.monotonic()
    n = 0
    while n < total:
        samples = []
        for i in range(n, min(n + chunk, total)):
            ms = i * 1000 // rate
            if ms % click_ms < 5:
                value = 30000 if (i // 24) % 2 == 0 else -30000
            else:
                value = int(8000 * math.sin(2 * math.pi * 440 * i / rate))
            samples += [value, value]
        pipe.write(struct.pack("<%dh" % len(samples), *samples))
        n += chunk
        delay = start + n / rate - 0.1 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
print("closed", n, flush=True)
