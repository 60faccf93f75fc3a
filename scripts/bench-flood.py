#!/usr/bin/env python3
"""Flood benchmark on the namespace testbed (needs root; every node runs in a test namespace).

A DJ on host 1, a listener on host 3, and a hostile guest on host 2 sending forged votes (fresh
made-up keys, made-up signatures: each would cost a full Ed25519 check) at each RATE for SECONDS.
Prints per rate: the rate the flooder reached, the DJ's CPU use during the flood, the datagrams
it dropped by reason, forged votes counted (must be 0), the listener's longest gap between
updates (snapshots come every 0.5 s) and whether it ever called the station silent.
"""
import json, os, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, ROOT, TESTBED, cpu_seconds, line_count, read_trace, require_root, sh, spawn, stop,
                      testbed_down, testbed_up, wait_event)

RATES = [int(r) for r in os.environ.get("FLOOD_RATES", "20000,50000").split(",")]
SECONDS = float(os.environ.get("FLOOD_SECONDS", "10"))


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-bench-flood-")
    lan = testbed_up(3)
    try:
        print(f"partyradio flood benchmark: forged votes from one host for {SECONDS:.0f} s per rate, binary {BIN}")
        for rate in RATES:
            dj_log, listen_log = f"{work}/dj-{rate}.log", f"{work}/listen-{rate}.log"
            dj = spawn(lan, 1, dj_log, BIN, "dj", "--name", f"Flood {rate}", "--no-audio", "--json-events",
                       "--state-dir", f"{work}/dj-{rate}")
            started = wait_event(dj_log, lambda e: e.get("event") == "station_started")
            wait_event(dj_log, lambda e: e.get("event") == "station_published")
            listener = spawn(lan, 3, listen_log, BIN, "listen", f"Flood {rate}", "--no-audio", "--json-events",
                             "--state-dir", f"{work}/l-{rate}")
            wait_event(listen_log, lambda e: e.get("event") == "tuned_in")
            time.sleep(2)
            mark = line_count(listen_log)
            cpu_before, wall_before = cpu_seconds(dj), time.monotonic()
            flood = sh(TESTBED, "run", lan, "2", "python3", os.path.join(ROOT, "scripts", "forged-flood.py"),
                       started["address"], str(started["port"]), started["id"], str(rate), str(SECONDS))
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
            print(f"  {flood}")
            print(f"    DJ CPU during the flood {cpu * 100:5.1f} % of a core; forged votes counted {counted}; "
                  f"drops {json.dumps(drops, sort_keys=True)}")
            print(f"    listener: longest gap between updates {gap:.0f} ms, silent {silent} times")
    finally:
        testbed_down(lan)


if __name__ == "__main__":
    main()
