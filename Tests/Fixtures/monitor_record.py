#!/usr/bin/env python3
"""Records a PulseAudio null sink's monitor (`party.monitor`, $PULSE_SERVER's) with parec as mono
s16le at 48 kHz for SECONDS into OUT, and prints when its sample 0 was made on CLOCK_REALTIME (the
clock a station's time is in on one machine): a read returns at least as late as its last sample
was made, so the least of (read time - samples so far / rate) over all reads is sample 0's time.

usage: monitor_record.py SECONDS OUT [SOURCE]   (SOURCE: another monitor than party.monitor)
"""
import subprocess
import sys
import time

seconds, out = float(sys.argv[1]), sys.argv[2]
source = sys.argv[3] if len(sys.argv) > 3 else "party.monitor"
parec = subprocess.Popen(
    ["parec", "-d", source, "--raw", "--format=s16le", "--rate=48000", "--channels=1", "--latency-msec=5"],
    stdout=subprocess.PIPE, bufsize=0)
total = 0
start = None
end = None
with open(out, "wb") as f:
    while True:
        data = parec.stdout.read(4096)
        now = time.time_ns()
        if not data:
            break
        if start is None:
            print("ready", flush=True)
            end = time.monotonic() + seconds
        f.write(data)
        total += len(data) // 2
        made = now - total * 1_000_000_000 // 48000
        start = made if start is None else min(start, made)
        if time.monotonic() >= end:
            break
parec.kill()
parec.wait()
print("done start_ns %d samples %d" % (start or 0, total), flush=True)
