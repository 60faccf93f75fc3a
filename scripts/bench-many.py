#!/usr/bin/env python3
"""Many listeners on one DJ (needs root; the namespace testbed).

A DJ on host 1 (`--no-audio --voters-per-address 1000`: many guests share each host's address
here) and LISTENERS real listener processes (default 200) spread over HOSTS testbed hosts (default
10), all `--no-audio` except PLAYING of them (default 3) that play through mpv's null output with
`--trace`. Once every listener is in the DJ's roster, for MEASURE seconds (default 30):

  - the DJ's CPU (% of one core) and resident memory, against the same DJ before anyone joined;
  - the snapshot rate as listeners receive it (state and progress events a second at a sample of
    listeners: the DJ sends two a second plus one per change);
  - the playing listeners' sync error against the DJ's trace (as bench-sync.py measures it);
then every listener host runs `vote up` for each of its listeners' state directories at once
(LISTENERS votes within a second): each vote's round trip (send -> counted answer, as `vote --json`
measures it), p50/p99, and how many were counted.
"""
import bisect, json, os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, TESTBED, cpu_seconds, read_trace as events, require_root, sh, spawn, testbed_down,
                      testbed_up, upper_percentile as percentile, usage)

LISTENERS = int(os.environ.get("LISTENERS", "200"))
HOSTS = max(1, int(os.environ.get("HOSTS", "10")))
PLAYING = int(os.environ.get("PLAYING", "3"))
MEASURE = float(os.environ.get("MEASURE", "30"))


def rss_mib(pid):
    return usage(pid)[0]["VmRSS"]


def dj_pid(lan):
    # The DJ is the only `partyradio dj` in this testbed's first host.
    host_pid = sh(TESTBED, "pid", lan, "1")
    ns = os.readlink(f"/proc/{host_pid}/ns/net")
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{pid}/ns/net") != ns:
                continue
            cmd = open(f"/proc/{pid}/cmdline").read().split("\0")
        except OSError:
            continue
        if len(cmd) > 1 and cmd[0].endswith("partyradio") and cmd[1] == "dj":
            return int(pid)
    sys.exit("bench: cannot find the DJ's process")


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-many-")
    lan = testbed_up(HOSTS + 1, "--tag", "bench")
    try:
        spawn(lan, 1, f"{work}/dj.log", BIN, "dj", "--name", "Many", "--no-audio", "--json-events",
              "--voters-per-address", "1000", "--trace", f"{work}/dj.jsonl", "--state-dir", f"{work}/dj")
        deadline = time.time() + 20
        while time.time() < deadline and not any(e.get("event") == "station_published" for e in events(f"{work}/dj.log")):
            time.sleep(0.2)
        pid = dj_pid(lan)
        time.sleep(2)
        c0, t0 = cpu_seconds(pid), time.time()
        time.sleep(10)
        idle_cpu = (cpu_seconds(pid) - c0) / (time.time() - t0) * 100
        idle_rss = rss_mib(pid)

        started = time.time()
        for n in range(LISTENERS):
            host = 2 + n % HOSTS
            extra = (["--audio-driver", "null", "--trace", f"{work}/l{n}.jsonl"] if n < PLAYING else ["--no-audio"])
            spawn(lan, host, f"{work}/l{n}.log", BIN, "listen", "Many", "--json-events",
                  "--as", f"guest{n}", *extra, "--state-dir", f"{work}/l{n}")
        spawned = time.time() - started
        joined_at = None
        deadline = time.time() + 120
        while time.time() < deadline:
            counts = [e.get("listeners", 0) for e in events(f"{work}/dj.log") if e.get("event") == "listener_joined"]
            if counts and max(counts) >= LISTENERS:
                joined_at = time.time() - started
                break
            time.sleep(0.5)
        top = max([e.get("listeners", 0) for e in events(f"{work}/dj.log") if e.get("event") == "listener_joined"] or [0])

        mark = time.time()
        c0 = cpu_seconds(pid)
        time.sleep(MEASURE)
        load_cpu = (cpu_seconds(pid) - c0) / (time.time() - mark) * 100
        load_rss = rss_mib(pid)
        window = (mark * 1e9, time.time() * 1e9)
        rates = []
        for n in range(0, LISTENERS, max(1, LISTENERS // 20)):
            got = [e for e in events(f"{work}/l{n}.log") if e.get("event") in ("state", "progress")
                   and window[0] <= e.get("time_ns", 0) <= window[1]]
            rates.append(len(got) / MEASURE)

        # Everyone votes at once: one `vote up` per listener's state directory, all hosts together.
        procs = []
        vote_start = time.time()
        for host in range(HOSTS):
            dirs = [f"{work}/l{n}" for n in range(LISTENERS) if n % HOSTS == host]
            cmd = ["bash", "-c", "".join(
                f"{BIN} vote up --station Many --json --timeout 20 --state-dir {d} > {d}.vote 2>&1 & " for d in dirs)
                + "wait"]
            procs.append(subprocess.Popen([TESTBED, "run", lan, str(2 + host), *cmd]))
        for proc in procs:
            proc.wait()
        deadline = time.time() + 40
        results = []
        while time.time() < deadline:
            results = []
            for n in range(LISTENERS):
                try:
                    results.append(json.loads(open(f"{work}/l{n}.vote").read().strip().splitlines()[-1]))
                except (OSError, ValueError, IndexError):
                    pass
            if len(results) >= LISTENERS:
                break
            time.sleep(0.5)
        vote_wall = time.time() - vote_start
    finally:
        testbed_down(lan)

    # Sync of the playing listeners against the DJ's trace (the DJ's clock is the machine's here).
    dj = [e for e in events(f"{work}/dj.jsonl") if e.get("dj_time_ns") is not None]
    dj_true = [e["true_time_ns"] for e in dj]
    errors = []
    for n in range(min(PLAYING, LISTENERS)):
        for line in events(f"{work}/l{n}.jsonl"):
            if not (window[0] <= line["true_time_ns"] <= window[1]) or line.get("player_position_ms") is None:
                continue
            i = min(max(0, bisect.bisect_left(dj_true, line["true_time_ns"])), len(dj) - 1)
            near = dj[i]
            if near["track_id"] != line["track_id"] or near["station_position_ms"] is None or near["paused"]:
                continue
            truth = near["station_position_ms"] + (line["true_time_ns"] - near["true_time_ns"]) / 1e6
            errors.append(line["player_position_ms"] - truth)
    latencies = [r["latency_ms"] for r in results if "latency_ms" in r]
    counted = sum(1 for r in results if r.get("status", "counted") == "counted" and "latency_ms" in r)
    print(f"partyradio many-listeners benchmark: 1 DJ, {LISTENERS} listener processes on {HOSTS} hosts "
          f"({PLAYING} playing through mpv's null output), {MEASURE:.0f} s measured, binary {BIN}")
    print(f"  spawned in {spawned:.1f} s; all {LISTENERS} in the DJ's roster after "
          + (f"{joined_at:.1f} s" if joined_at else f"(only {top} joined within 120 s)"))
    print(f"  DJ CPU {idle_cpu:.1f} % of a core with nobody listening, {load_cpu:.1f} % with {LISTENERS}; "
          f"resident memory {idle_rss:.1f} MiB -> {load_rss:.1f} MiB")
    print(f"  snapshots a listener received a second (20 listeners sampled): min {min(rates or [0]):.2f}, "
          f"median {percentile(rates, 0.5):.2f}, max {max(rates or [0]):.2f}")
    if errors:
        mags = [abs(e) for e in errors]
        print(f"  playing listeners' player error vs the DJ's trace ({len(errors)} samples): |p50| "
              f"{percentile(mags, 0.5):.2f} ms, |p99| {percentile(mags, 0.99):.2f} ms, max {max(mags):.2f} ms")
    if latencies:
        print(f"  {len(latencies)} votes at once ({vote_wall:.1f} s wall for all the processes): round trip p50 "
              f"{percentile(latencies, 0.5):.2f} ms, p99 {percentile(latencies, 0.99):.2f} ms, max {max(latencies):.2f} ms; "
              f"{counted} answered counted")
    print(f"  logs kept in {work}")


if __name__ == "__main__":
    main()
