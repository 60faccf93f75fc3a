#!/usr/bin/env python3
"""Start-up benchmark: what every command pays before it does anything (issue 11, item 6).

Prints the shared libraries the binary loads (ldd) and which of them it names itself (NEEDED),
then the wall time of whole commands, RUNS runs each (default 20), each a fresh process:
  - `--help`, `--version` and `stats` (an empty state directory) here: they touch no network;
  - as root, on a namespace testbed of 2 hosts (rule one: nothing multicasts outside it): a DJ
    (`--no-audio`) on host 1, and on host 2 `vote up --station NAME` (discovery and the DJ's ack
    included) and `stations` (one browse sweep), timed by this script running on host 2 itself;
    and the DJ's start until it reports its station published.
PARTYRADIO_BIN picks the binary (default .build/release/partyradio).
"""
import os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import BIN, TESTBED, now_ns, spawn, stop, testbed_down, testbed_up, wait_event

RUNS = max(5, int(os.environ.get("RUNS", "20")))


def timed(args, runs=RUNS):
    """Wall time of `args` in ms, `runs` times (after one untimed run to warm the page cache)."""
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append((time.perf_counter() - started) * 1e3)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
    return times


def report(name, times):
    ordered = sorted(times)
    print(f"{name:40s} n={len(times):3d}  min {ordered[0]:7.1f} ms  p50 {statistics.median(times):7.1f} ms  "
          f"max {ordered[-1]:7.1f} ms")


def libraries():
    ldd = subprocess.run(["ldd", BIN], capture_output=True, text=True).stdout.splitlines()
    needed = [line.split("[")[1].rstrip("]") for line in
              subprocess.run(["readelf", "-d", BIN], capture_output=True, text=True).stdout.splitlines()
              if "(NEEDED)" in line]
    print(f"binary {BIN}")
    print(f"ldd: {len(ldd)} lines; NEEDED: {len(needed)}: {' '.join(needed)}")
    print(f"libmpv NEEDED: {'yes' if any('libmpv' in n for n in needed) else 'no'}")


def on_host():
    """Runs on testbed host 2: times vote and stations against the station named in argv."""
    name, state = sys.argv[2], sys.argv[3]
    report("vote up --station NAME (host 2)", timed([BIN, "vote", "up", "--station", name, "--state-dir", state]))
    report("stations (host 2)", timed([BIN, "stations", "--state-dir", state]))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--on-host":
        return on_host()
    libraries()
    state = tempfile.mkdtemp(prefix="partyradio-startup-")
    report("--help", timed([BIN, "--help"]))
    report("--version", timed([BIN, "--version"]))
    report("stats (empty state directory)", timed([BIN, "stats", "--state-dir", state]))
    if os.geteuid() != 0:
        print("not root: the testbed part (vote, stations, dj) is skipped")
        return
    lan = testbed_up(2)
    try:
        published = []
        for run in range(10):
            log = f"{state}/dj{run}.log"
            started = now_ns()
            # A new name each run, a second apart: mDNS holds back a name announced or withdrawn
            # less than a second ago (RFC 6762 §6.2), which would time the pause, not the start.
            time.sleep(1.0)
            name = f"Startup {run}"
            pid = spawn(lan, 1, log, BIN, "dj", "--name", name, "--no-audio", "--json-events",
                        "--state-dir", f"{state}/dj")
            event = wait_event(log, lambda e: e.get("event") == "station_published", timeout=20, poll=0.002)
            published.append((event["time_ns"] - started) / 1e6)
            if run < 9:
                stop(pid, timeout=float("inf"))
        report("dj --no-audio: start -> station_published", published)
        subprocess.run([TESTBED, "run", lan, "2", sys.executable, os.path.abspath(__file__), "--on-host", name,
                        f"{state}/guest"], check=True, env=dict(os.environ, PARTYRADIO_BIN=BIN, RUNS=str(RUNS)))
        subprocess.run(["kill", str(pid)])
    finally:
        testbed_down(lan)


if __name__ == "__main__":
    main()
