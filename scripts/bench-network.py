#!/usr/bin/env python3
"""Network benchmark on the namespace testbed (needs root; every node runs in a test namespace).

Prints, over RUNS runs (at least 5):
  - DJ start -> visible in `stations --watch` on another host
  - listener start -> first now playing (`listen`, which waits for the first DNS-SD sweep to
    be sure there is only one station, and `listen NAME`, which does not)
  - vote sent -> acknowledged (the DJ's ack, measured by the voter) and the whole `vote` command
"""
import json, os, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, TESTBED, line_count, now_ns, report, require_root, sh, spawn, stop, testbed_down,
                      testbed_up, wait_event)

RUNS = max(5, int(os.environ.get("RUNS", "10")))
VOTES = max(5, int(os.environ.get("VOTES", "40")))
# The LAN's families (`testbed.sh up --ip`): v4 (default), v6 (no IPv4 at all) or dual.
IP = os.environ.get("IP", "v4")


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-bench-")
    lan = testbed_up(3, "--ip", IP)
    try:
        watch_log = f"{work}/watch.log"
        spawn(lan, 2, watch_log, BIN, "stations", "--watch", "--json", "--state-dir", f"{work}/watch")
        time.sleep(1.5)
        visible, first_now_playing, first_by_name, acks, votes = [], [], [], [], []
        for run in range(RUNS):
            mark = line_count(watch_log)
            dj_log = f"{work}/dj{run}.log"
            started = now_ns()
            dj = spawn(lan, 1, dj_log, BIN, "dj", "--name", f"Bench {run}", "--no-audio", "--json-events",
                       "--state-dir", f"{work}/dj")
            seen = wait_event(watch_log, lambda e: e.get("event") == "appeared", start=mark)
            visible.append((seen["time_ns"] - started) / 1e6)

            for by_name, results in ((False, first_now_playing), (True, first_by_name)):
                listen_log = f"{work}/listen{run}-{by_name}.log"
                started = now_ns()
                station = [f"Bench {run}"] if by_name else []
                listener = spawn(lan, 3, listen_log, BIN, "listen", *station, "--no-audio", "--json-events",
                                 "--state-dir", f"{work}/l")
                state = wait_event(listen_log, lambda e: e.get("event") == "state")
                results.append((state["time_ns"] - started) / 1e6)
                stop(listener, "INT")
            mark = line_count(watch_log)
            stop(dj)
            wait_event(watch_log, lambda e: e.get("event") == "vanished", start=mark)

        dj = spawn(lan, 1, f"{work}/dj-votes.log", BIN, "dj", "--name", "Bench votes", "--no-audio", "--json-events",
                   "--state-dir", f"{work}/dj")
        wait_event(f"{work}/dj-votes.log", lambda e: e.get("event") == "station_published")
        for index in range(VOTES):
            choice = "up" if index % 2 == 0 else "down"
            started = time.monotonic_ns()
            out = sh(TESTBED, "run", lan, "2", BIN, "vote", choice, "--json", "--station", "Bench votes",
                     "--state-dir", f"{work}/voter")
            votes.append((time.monotonic_ns() - started) / 1e6)
            acks.append(json.loads(out)["latency_ms"])
        stop(dj)

        print(f"partyradio network benchmark: {RUNS} runs, {VOTES} votes, 3 namespace hosts ({IP}), binary {BIN}")
        report("DJ start -> visible on another host", visible)
        report("listener start -> first now playing", first_now_playing)
        report("  the same, station named (`listen NAME`)", first_by_name)
        report("vote sent -> acknowledged", acks)
        report("whole `vote` command (incl. discovery)", votes)
    finally:
        testbed_down(lan)


if __name__ == "__main__":
    main()
