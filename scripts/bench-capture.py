#!/usr/bin/env python3
"""A live DJ's capture across a stall (docs/LIVE.md, "A DJ that stalls"): `scripts/bench capture`
(needs root). Every process on a testbed host (rule one).

  host 1  PulseAudio with the DJ of a live station (`dj --live`, the default source: the station's
          own sink, `partyradio_capture_bench`), a recorder on that sink's monitor, and a writer
          (pacat) playing a 440 Hz tone with a 5 ms click every 400-700 ms (seeded, irregular, so that
          a stamp off by a whole number of click intervals cannot match the wrong click and pass)
          into the sink in real time, CAPTURE_SECONDS long (default 16); STALL_AT s into the signal
          (default 7.2) the DJ is stopped with SIGSTOP for each of STALLS ms (default `300,2000`: one
          run each) and continued;
  host 2  a listener (`partyradio listen`) into a PulseAudio null sink, recorded from its monitor.

Each click heard at host 2 is printed against the click in the station's sink nearest 60 ms (the
default delay) before it: the offset is the same for every click of a run (both monitors hand
their blocks out early by their own sink's latency, which differs from run to run); what the run
shows is whether the clicks after the stall keep the offset of those before it, and how many were
lost. Environment: PARTYRADIO_BIN, STALLS, STALL_AT, CAPTURE_SECONDS, KEEP=1 (keep the recordings
and logs). Installs pulseaudio, pulseaudio-utils and python3-numpy if missing (services blocked).
"""
import os, signal, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, TESTBED, keep_or_remove, load_script, null_sink, percentile, require_root, spawn,
                      testbed_down, testbed_up)

live = load_script("bench-live.py")
speaker = load_script("bench-speaker.py")
STALLS = [float(s) for s in os.environ.get("STALLS", "300,2000").split(",")]
STALL_AT = float(os.environ.get("STALL_AT", "7.2"))
SECONDS = int(os.environ.get("CAPTURE_SECONDS", "16"))  # bash's SECONDS is its own timer
SINK = "partyradio_capture_bench"
RATE = 48000
DELAY_NS = 60_000_000


def signal_bytes():
    """The writer's signal (interleaved s16le stereo) and its click count."""
    import random
    import numpy as np
    t = np.arange(RATE * SECONDS)
    tone = (8000 * np.sin(2 * np.pi * 440 * t / RATE)).astype(np.int16)
    draw, at, clicks = random.Random(20261207), RATE // 2, 0
    while at + 240 < len(tone):
        tone[at: at + 240] = 30000
        clicks += 1
        at += draw.randint(400, 700) * RATE // 1000
    return np.repeat(tone, 2).tobytes(), clicks


def run(work, stall_ms):
    lan = testbed_up(2, "--tag", "bench-capture")
    pids = []
    try:
        for host in (1, 2):
            home = f"{work}/pa{host}"
            os.makedirs(home)
            pids.append(spawn(lan, host, f"{home}.log", "/usr/bin/env", f"HOME={home}", f"XDG_RUNTIME_DIR={home}",
                              "/usr/bin/pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1",
                              "--use-pid-file=no", "--disallow-exit", "--log-target=stderr", "-L", null_sink("party"),
                              "-L", f"module-native-protocol-unix socket={home}/native auth-anonymous=1"))
        for host in (1, 2):
            deadline = time.time() + 15
            while not os.path.exists(f"{work}/pa{host}/native"):
                if time.time() > deadline:
                    raise RuntimeError(f"PulseAudio did not start on host {host}")
                time.sleep(0.05)
        env = {host: dict(os.environ, PULSE_SERVER=f"unix:{work}/pa{host}/native") for host in (1, 2)}
        dj = spawn(lan, 1, f"{work}/dj.log", BIN, "dj", "--name", "Capture bench", "--live", "--no-audio",
                   "--json-events", "--fresh", "--state-dir", f"{work}/dj", env=env[1])
        pids.append(dj)
        deadline = time.time() + 20
        while '"station_published"' not in open(f"{work}/dj.log").read():
            if time.time() > deadline:
                raise RuntimeError(f"the DJ did not go on air: {work}/dj.log")
            time.sleep(0.1)
        pids.append(spawn(lan, 2, f"{work}/listen.log", BIN, "listen", "Capture bench", "--json-events",
                          "--state-dir", f"{work}/l2", env=env[2]))
        recorder = os.path.abspath(__file__)
        pids.append(spawn(lan, 1, f"{work}/rec1.log", "/usr/bin/python3", recorder, "--record",
                          f"unix:{work}/pa1/native", f"{work}/h1", SINK))
        pids.append(spawn(lan, 2, f"{work}/rec2.log", "/usr/bin/python3", recorder, "--record",
                          f"unix:{work}/pa2/native", f"{work}/h2", "party"))
        time.sleep(4)
        pacat = subprocess.Popen([TESTBED, "run", lan, "1", "/usr/bin/pacat", "-d", SINK, "--raw", "--format=s16le",
                                  f"--rate={RATE}", "--channels=2", "--latency-msec=20"], stdin=subprocess.PIPE,
                                 env=env[1])

        def stall():
            time.sleep(max(0.0, start + STALL_AT - time.monotonic()))
            os.kill(dj, signal.SIGSTOP)
            time.sleep(stall_ms / 1000)
            os.kill(dj, signal.SIGCONT)

        (data, clicks), chunk = signal_bytes(), RATE * 4 // 100
        start = time.monotonic()
        stopper = threading.Thread(target=stall)  # timed from the signal's start
        stopper.start()
        for i in range(0, len(data), chunk):
            pacat.stdin.write(data[i:i + chunk])
            pacat.stdin.flush()
            ahead = start + (i + chunk) / (RATE * 4) - 0.03 - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        pacat.stdin.close()
        pacat.wait()
        stopper.join()
        time.sleep(2)
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        time.sleep(1)
        testbed_down(lan)
    sent, _, _ = live.heard_clicks(f"{work}/h1")
    heard, _, _ = live.heard_clicks(f"{work}/h2")
    if not sent or not heard:
        print(f"  stall {stall_ms:.0f} ms: {len(sent)} clicks in the sink, {len(heard)} heard (KEEP=1 keeps the logs)")
        return
    first = sent[0]
    before, after = [], []
    for h in heard:
        s = min(sent, key=lambda x: abs(h - DELAY_NS - x))
        offset = (h - s - DELAY_NS) / 1e6
        # The signal's first click is 0.5 s in; the stall began STALL_AT s in.
        (before if (s - first) / 1e9 + 0.5 < STALL_AT else after).append(offset)
    med = lambda values: percentile(values, 0.5) if values else float("nan")
    spread = max(abs(o - med(before)) for o in after) if before and after else float("nan")
    print(f"  stall {stall_ms:5.0f} ms: {clicks} clicks played, {len(sent)} in the station's sink, {len(heard)} heard; heard - (sink + "
          f"60 ms): before p50 {med(before):+.2f} ms, after p50 {med(after):+.2f} ms; the farthest click after the stall "
          f"{spread:.2f} ms from before's p50")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--record":
        return speaker.record(sys.argv[2], sys.argv[3], sink=sys.argv[4])
    require_root()
    speaker.PACKAGES = ["pulseaudio", "pulseaudio-utils", "python3-numpy"]
    speaker.ensure_packages()
    print(f"capture: a live DJ (dj --live, its own sink) stopped for {', '.join(f'{s:.0f}' for s in STALLS)} ms "
          f"{STALL_AT} s into {SECONDS} s of clicks (every 400-700 ms); a listener on host 2; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load {' '.join(open('/proc/loadavg').read().split()[:3])}")
    for stall_ms in STALLS:
        work = tempfile.mkdtemp(prefix="partyradio-capture-")
        try:
            run(work, stall_ms)
        finally:
            keep_or_remove(work, "    recordings and logs")


if __name__ == "__main__":
    main()
