#!/usr/bin/env python3
"""Requests benchmark on the namespace testbed (needs root; every node runs in a test namespace).

A DJ on host 1 and a listener on each of hosts 2-4; a guest on host 2 requests a track of the
DJ's library by title words, RUNS times (the DJ drops each one afterwards, so the next is new).
Prints:
  - request datagram -> the DJ's answer (measured by the requester)
  - the DJ's answer -> the request in a listener's up-next list (each listener, and the last of the three)
  - the whole `request --station NAME` command started -> visible at every listener
  - the whole `queue --station NAME` command (it shows the request at once)
"""
import json, os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, TESTBED, line_count, now_ns, require_root, sh, spawn, testbed_down, testbed_up,
                      wait_event)
import benchlib

RUNS = max(5, int(os.environ.get("RUNS", "30")))
STATION = "Bench requests"
TITLES = ["minor stroll", "octave bounce", "pentatonic drift", "blue hour", "last call"]


def report(name, values_ms):
    benchlib.report(name, values_ms, width=52)


def listed(event, request_id):
    return event.get("event") == "up_next" and any(
        entry.get("request_id") == request_id for entry in event.get("up_next", []))


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-bench-requests-")
    lan = testbed_up(4)
    dj = None
    try:
        dj_log = f"{work}/dj.log"
        with open(dj_log, "w") as out:
            # `run` keeps stdin, so the DJ reads its `drop N` commands from this pipe.
            dj = subprocess.Popen([TESTBED, "run", lan, "1", BIN, "dj", "--name", STATION, "--no-audio",
                                   "--json-events", "--max-requests", "100", "--state-dir", f"{work}/dj"],
                                  stdin=subprocess.PIPE, stdout=out, stderr=subprocess.DEVNULL, text=True)
        wait_event(dj_log, lambda e: e.get("event") == "station_published")
        listener_logs = []
        for host in (2, 3, 4):
            log = f"{work}/listener{host}.log"
            spawn(lan, host, log, BIN, "listen", STATION, "--as", f"L{host}", "--no-audio",
                  "--json-events", "--state-dir", f"{work}/l{host}")
            wait_event(log, lambda e: e.get("event") == "tuned_in")
            listener_logs.append(log)

        acks, per_listener, all_listeners, whole, queue_command = [], [], [], [], []
        for run in range(RUNS):
            marks = [line_count(log) for log in listener_logs]
            dj_mark = line_count(dj_log)
            started = now_ns()
            out = sh(TESTBED, "run", lan, "2", BIN, "request", *TITLES[run % len(TITLES)].split(), "--json",
                     "--as", "Guest", "--station", STATION, "--state-dir", f"{work}/guest")
            answer = json.loads(out)
            request_id = answer["request_id"]
            if answer["status"] != "queued":
                raise RuntimeError(f"run {run}: {out}")
            acks.append(answer["latency_ms"])
            answered = wait_event(dj_log, lambda e: e.get("event") == "request" and e.get("request_id") == request_id,
                                  start=dj_mark)["time_ns"]
            seen = [wait_event(log, lambda e: listed(e, request_id), start=mark)["time_ns"]
                    for log, mark in zip(listener_logs, marks)]
            per_listener += [(t - answered) / 1e6 for t in seen]
            all_listeners.append((max(seen) - answered) / 1e6)
            whole.append((max(seen) - started) / 1e6)

            begun = time.monotonic_ns()
            queue = json.loads(sh(TESTBED, "run", lan, "3", BIN, "queue", "--json", "--station", STATION,
                                  "--state-dir", f"{work}/queue"))
            queue_command.append((time.monotonic_ns() - begun) / 1e6)
            if not any(entry.get("request_id") == request_id for entry in queue["up_next"]):
                raise RuntimeError(f"run {run}: request #{request_id} missing from `queue`")

            dj_mark = line_count(dj_log)
            dj.stdin.write(f"drop {request_id}\n")
            dj.stdin.flush()
            wait_event(dj_log, lambda e: e.get("event") == "notice"
                       and e.get("message") == f"Dropped request #{request_id}.", start=dj_mark)

        print(f"partyradio requests benchmark: {RUNS} requests, a DJ and 3 listeners on 4 namespace hosts, "
              f"binary {BIN}")
        report("request sent -> the DJ's answer (requester)", acks)
        report("the DJ's answer -> in a listener's up next (each)", per_listener)
        report("the DJ's answer -> in every listener's up next", all_listeners)
        report("whole `request` command -> in every listener's", whole)
        report("whole `queue` command (incl. discovery)", queue_command)
    finally:
        if dj is not None:
            try:
                dj.stdin.write("quit\n")
                dj.stdin.close()
                dj.wait(timeout=5)
            except Exception:
                dj.kill()
        testbed_down(lan)


if __name__ == "__main__":
    main()
