#!/usr/bin/env python3
"""Flood benchmark on the namespace testbed (needs root; every node runs in a test namespace).

A DJ on host 1, a listener on host 3, and a hostile guest on host 2 sending forged votes (fresh
made-up keys, made-up signatures: each would cost a full Ed25519 check) from 64 addresses of its
own (aliases, as one machine with many addresses) at each RATE for SECONDS. Meanwhile guests on
host 4, each with a fresh key, run `partyradio vote up` one after another (the DJ counts up to 1000
keys per address, so that each of them counts).
Prints per rate: the rate the flooder reached, the DJ's CPU use during the flood, the datagrams
it dropped by reason, forged votes counted (must be 0), the listener's longest gap between
updates (snapshots come every 0.5 s) and whether it ever called the station silent, and the fresh
guests' votes: how many succeeded on their first try and how long each took.
"""
import json, math, os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, ROOT, TESTBED, cpu_seconds, line_count, read_trace, require_root, sh, spawn, stop,
                      testbed_down, testbed_up, wait_event)

RATES = [int(r) for r in os.environ.get("FLOOD_RATES", "20000,50000").split(",")]
SECONDS = float(os.environ.get("FLOOD_SECONDS", "10"))
ADDRESSES = int(os.environ.get("FLOOD_ADDRESSES", "64"))
# One Python sender reaches about 30,000 datagrams a second here: a rate is split between processes.
PER_PROCESS = 25000


def add_aliases(lan, host, count):
    """COUNT addresses on HOST's eth0 from .100 of its subnet on; returns the first."""
    own = sh(TESTBED, "ip", lan, str(host))
    prefix = own.rsplit(".", 1)[0]
    for n in range(count):
        sh(TESTBED, "run", lan, str(host), "/usr/sbin/ip", "addr", "add", f"{prefix}.{100 + n}/24", "dev", "eth0")
    return prefix


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-bench-flood-")
    lan = testbed_up(4)
    try:
        prefix = add_aliases(lan, 2, ADDRESSES)
        print(f"partyradio flood benchmark: forged votes from {ADDRESSES} addresses of one host for {SECONDS:.0f} s "
              f"per rate, fresh guests voting meanwhile; binary {BIN}")
        for rate in RATES:
            dj_log, listen_log = f"{work}/dj-{rate}.log", f"{work}/listen-{rate}.log"
            dj = spawn(lan, 1, dj_log, BIN, "dj", "--name", f"Flood {rate}", "--no-audio", "--json-events",
                       "--state-dir", f"{work}/dj-{rate}", "--voters-per-address", "1000")
            started = wait_event(dj_log, lambda e: e.get("event") == "station_started")
            wait_event(dj_log, lambda e: e.get("event") == "station_published")
            listener = spawn(lan, 3, listen_log, BIN, "listen", f"Flood {rate}", "--no-audio", "--json-events",
                             "--state-dir", f"{work}/l-{rate}")
            wait_event(listen_log, lambda e: e.get("event") == "tuned_in")
            time.sleep(2)
            mark = line_count(listen_log)
            cpu_before, wall_before = cpu_seconds(dj), time.monotonic()
            processes = max(1, math.ceil(rate / PER_PROCESS))
            share = ADDRESSES // processes
            flooders = [
                subprocess.Popen(
                    [TESTBED, "run", lan, "2", "python3", os.path.join(ROOT, "scripts", "forged-flood.py"),
                     started["address"], str(started["port"]), started["id"], str(rate / processes), str(SECONDS),
                     f"{prefix}.{100 + p * share}+{share}"],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                for p in range(processes)]
            # Fresh guests vote while the flood runs: a new key each, from a host the DJ never heard.
            time.sleep(1.5)
            votes = []
            while time.monotonic() - wall_before < SECONDS - 2:
                began = time.monotonic()
                vote = subprocess.run(
                    [TESTBED, "run", lan, "4", BIN, "vote", "up", "--json", "--state-dir",
                     f"{work}/fresh-{rate}-{len(votes)}"], capture_output=True, text=True)
                votes.append((vote.returncode == 0, time.monotonic() - began))
                time.sleep(0.3)
            reached = [f.communicate()[0].strip() for f in flooders]
            cpu = (cpu_seconds(dj) - cpu_before) / (time.monotonic() - wall_before)
            during = read_trace(listen_log, mark)
            times = [e["time_ns"] for e in during if e.get("event") in ("state", "progress")]
            gap = max((b - a for a, b in zip(times, times[1:])), default=0) / 1e6
            silent = sum(1 for e in during if e.get("event") == "station_silent")
            stop(listener, "INT")
            stop(dj, "INT")
            stopped = wait_event(dj_log, lambda e: e.get("event") == "station_stopped")
            counted = sum(1 for e in read_trace(dj_log) if e.get("event") == "vote_counted")
            drops = stopped.get("dropped", {})
            sent = sum(int(r.split()[1]) for r in reached if r.startswith("sent"))
            ok = [t for good, t in votes if good]
            print(f"  {rate}/s asked: sent {sent} in {processes} process(es): "
                  f"{sent / SECONDS:.0f} per second ({'; '.join(reached)})")
            print(f"    DJ CPU during the flood {cpu * 100:5.1f} % of a core; forged votes counted "
                  f"{counted - len(ok)}; drops {json.dumps(drops, sort_keys=True)}")
            print(f"    listener: longest gap between updates {gap:.0f} ms, silent {silent} times")
            print(f"    fresh guests' votes: {len(ok)} of {len(votes)} succeeded on the first try; "
                  + (f"time to answer median {sorted(ok)[len(ok) // 2] * 1000:.0f} ms, "
                     f"max {max(ok) * 1000:.0f} ms" if ok else "none answered"))
    finally:
        testbed_down(lan)


if __name__ == "__main__":
    main()
