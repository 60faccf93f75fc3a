#!/usr/bin/env python3
"""First-audio benchmark on the namespace testbed (needs root): `listen NAME` start -> first audio.

A DJ on host 1 (`--no-audio`, demo library, `--trace`) and, on host 2, RUNS (default 10) fresh
`listen NAME` processes one after another, each with mpv's null output, `--trace` and `-v`. This
script runs itself on host 2 and starts each listener there with fork/exec, so the time is the
process's own, not the testbed's `run` wrapper's. Both clocks are wrong on purpose (DJ +350 ms,
+80 ppm; listener +1234 ms, +120 ppm), as in bench-sync.py: nothing may rely on them agreeing.

Two modes (MODES, default "fresh warm"):
  fresh  an empty state directory each run: mDNS finds the station, the media cache is empty;
  warm   one state directory for all runs (a first, untimed run fills it): the station was seen a
         few seconds ago (`recent_stations`) and the track may be in the media cache.

Phases, from the listener's `-v` lines (millisecond timestamps) and its trace, relative to the
fork of `listen`:
  main       the CLI's first log line (process start, dynamic loader, Swift runtime)
  player     libmpv loaded and initialised ("player made")
  resolved   mDNS resolved the station (or the recent sighting was used)
  tuned      the station's first snapshot: tuned in
  cached     the track's file is in the media cache
  clock      the DJ-clock estimate is good enough to play ("synchronised")
  audio      the player was unpaused on the station position ("playing from", the precise
             instant) - first audio
Error after start: the player position in the listener's trace minus where the station truly was
then (from the DJ's trace; every namespace shares the machine's clock), |error| in the first
second of audio and from 1 to 4 s.

PARTYRADIO_BIN picks the binary (default .build/release/partyradio).
"""
import bisect, json, os, re, statistics, subprocess, sys, tempfile, time
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import BIN, TESTBED, percentile, read_trace, require_root, spawn, testbed_down, testbed_up, wait_event

RUNS = max(1, int(os.environ.get("RUNS", "10")))
MODES = os.environ.get("MODES", "fresh warm").split()
HOLD = 4.5  # seconds of trace kept after first audio
NAME = "First audio"
DJ_CLOCK = ("350", "80")
LISTENER_CLOCK = ("1234", "120")
PHASES = [
    ("main", r"\[cli\] partyradio"),
    ("player", r"\[player\] player made"),
    ("resolved", r"\[discovery\] resolved|\[node\] asking .* where it was"),
    ("tuned", r"\[node\] tuned in"),
    ("cached", r"\[player\] media cache: \d+ bytes"),
    ("clock", r"\[clock\] synchronised"),
    ("audio", r"\[player\] playing from"),
]


def log_time_ns(line):
    stamp = line.split(" ", 1)[0]
    moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000) * 1_000_000


def phases(log_path, started_ns):
    """Milliseconds from the fork to each phase's first log line (the audio one to the ns)."""
    found = {}
    with open(log_path) as handle:
        for line in handle:
            for name, pattern in PHASES:
                if name not in found and re.search(pattern, line):
                    found[name] = (log_time_ns(line) - started_ns) / 1e6
                    exact = re.search(r"playing from .* true (\d+)", line)
                    if name == "audio" and exact:
                        found[name] = (int(exact.group(1)) - started_ns) / 1e6
    return found


def on_host():
    """Runs on host 2: starts the listeners, one after another, and records when each was forked."""
    work, mode = sys.argv[2], sys.argv[3]
    runs = []
    shared = f"{work}/{mode}-state"
    for index in range(RUNS + (1 if mode == "warm" else 0)):
        tag = f"{mode}-{index}"
        state = shared if mode == "warm" else f"{work}/{tag}-state"
        trace, log = f"{work}/{tag}.jsonl", f"{work}/{tag}.log"
        with open(log, "w") as err, open(f"{work}/{tag}.out", "w") as out:
            started = time.time_ns()
            process = subprocess.Popen(
                [BIN, "listen", NAME, "--json-events", "--audio-driver", "null", "--trace", trace, "-v",
                 "--clock-offset-ms", LISTENER_CLOCK[0], "--clock-drift-ppm", LISTENER_CLOCK[1],
                 "--state-dir", state], stdout=out, stderr=err)
            deadline = time.time() + 15
            first = None
            while time.time() < deadline:
                time.sleep(0.05)
                if first is None:
                    first = next((line["true_time_ns"] for line in read_trace(trace)
                                  if line["player_position_ms"] is not None), None)
                elif time.time_ns() - first > HOLD * 1e9:
                    break
            process.terminate()
            process.wait()
        if mode == "warm" and index == 0:
            continue  # fills the state directory; not timed
        runs.append({"tag": tag, "started": started, "trace": trace, "log": log})
        time.sleep(0.5)
    with open(f"{work}/{mode}.json", "w") as handle:
        json.dump(runs, handle)


def truth(dj):
    """The true station position (ms) at a true instant, from the DJ's trace; None across a change."""
    dj = [line for line in dj if line["station_position_ms"] is not None and not line["paused"]]
    times = [line["true_time_ns"] for line in dj]

    def at(true_ns, track):
        i = bisect.bisect_left(times, true_ns)
        if i <= 0 or i >= len(dj):
            return None
        a, b = dj[i - 1], dj[i]
        if a["track_id"] != track or b["track_id"] != track or b["station_position_ms"] < a["station_position_ms"]:
            return None
        share = (true_ns - a["true_time_ns"]) / (b["true_time_ns"] - a["true_time_ns"])
        return a["station_position_ms"] + share * (b["station_position_ms"] - a["station_position_ms"])
    return at


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--on-host":
        return on_host()
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-first-audio-")
    os.chmod(work, 0o755)
    lan = testbed_up(2)
    try:
        spawn(lan, 1, f"{work}/dj.log", BIN, "dj", "--name", NAME, "--no-audio", "--json-events",
              "--trace", f"{work}/dj.jsonl", "--clock-offset-ms", DJ_CLOCK[0], "--clock-drift-ppm", DJ_CLOCK[1],
              "--state-dir", f"{work}/dj")
        wait_event(f"{work}/dj.log", lambda e: e.get("event") == "station_published", timeout=20, poll=0.05)
        time.sleep(1.5)  # past mDNS's announcements
        for mode in MODES:
            subprocess.run([TESTBED, "run", lan, "2", sys.executable, os.path.abspath(__file__), "--on-host", work,
                            mode], check=True, env=dict(os.environ, PARTYRADIO_BIN=BIN, RUNS=str(RUNS)))
    finally:
        testbed_down(lan)

    station = truth(read_trace(f"{work}/dj.jsonl"))
    print(f"partyradio first-audio benchmark: `listen NAME` on host 2, DJ on host 1, {RUNS} runs a mode, "
          f"mpv ao=null, {BIN}")
    print("phases: ms from the fork of `listen` to the first log line of each (p50 [min-max] over the runs)")
    for mode in MODES:
        runs = json.load(open(f"{work}/{mode}.json"))
        table = {name: [] for name, _ in PHASES}
        early, later, never = [], [], 0
        for run in runs:
            found = phases(run["log"], run["started"])
            for name in table:
                if name in found:
                    table[name].append(found[name])
            trace = [line for line in read_trace(run["trace"]) if line["player_position_ms"] is not None]
            if not trace:
                never += 1
                continue
            first = run["started"] + found["audio"] * 1e6 if "audio" in found else trace[0]["true_time_ns"]
            for line in trace:
                true_pos = station(line["true_time_ns"], line["track_id"])
                if true_pos is None:
                    continue
                error = abs(line["player_position_ms"] - true_pos)
                since = (line["true_time_ns"] - first) / 1e9
                (early if since < 1 else later if since < 4 else []).append(error)
        print(f"\n{mode}: {len(runs)} runs, {never} never played")
        for name, values in table.items():
            if values:
                print(f"  {name:9s} p50 {statistics.median(values):7.1f} ms  [{min(values):7.1f} - "
                      f"{max(values):7.1f}]  (n={len(values)})")
        print(f"  error in the first second of audio: p50 {percentile(early, .5):.3f} ms, p99 "
              f"{percentile(early, .99):.3f} ms, max {max(early, default=float('nan')):.3f} ms (n={len(early)})")
        print(f"  error 1-4 s after first audio:      p50 {percentile(later, .5):.3f} ms, p99 "
              f"{percentile(later, .99):.3f} ms, max {max(later, default=float('nan')):.3f} ms (n={len(later)})")
    print(f"\nlogs and traces kept in {work}")


if __name__ == "__main__":
    main()
