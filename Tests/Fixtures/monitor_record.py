#!/usr/bin/env python3
"""Records a PulseAudio null sink's monitor (`party.monitor`, $PULSE_SERVER's) with parec as mono
s16le at 48 kHz for SECONDS into OUT, and prints when its sample 0 was made on CLOCK_REALTIME (the
clock a station's time is in on one machine) and how many samples the monitor makes in a second of
that clock. A read returns at least as late as its last sample was made, so over the first and the
last third of the reads the least of (read time - samples so far / rate) is when sample 0 was made;
the two agree for one rate. That is not 48 000: a null sink moves its clock on by each chunk's length
rounded down to a microsecond, so with chunks of odd lengths it runs a few hundred ppm fast.

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
end = None
reads = []  # (read time, samples so far)
with open(out, "wb") as f:
    while True:
        data = parec.stdout.read(4096)
        now = time.time_ns()
        if not data:
            break
        if end is None:
            print("ready", flush=True)
            end = time.monotonic() + seconds
        f.write(data)
        total += len(data) // 2
        reads.append((now, total))
        if time.monotonic() >= end:
            break
parec.kill()
parec.wait()
rate = 48000.0
start = 0
if len(reads) >= 3:
    third = len(reads) // 3
    for _ in range(4):
        first = min(reads[:third], key=lambda r: r[0] - r[1] * 1e9 / rate)
        last = min(reads[-third:], key=lambda r: r[0] - r[1] * 1e9 / rate)
        if last[1] > first[1] and last[0] > first[0]:
            rate = (last[1] - first[1]) * 1e9 / (last[0] - first[0])
    start = int(min(r[0] - r[1] * 1e9 / rate for r in reads))
print("done start_ns %d samples %d rate %.3f" % (start, total, rate), flush=True)
