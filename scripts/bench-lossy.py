#!/usr/bin/env python3
"""Lossy-link benchmark on the namespace testbed (needs root).

A DJ on host 1 (`--audio-driver null`, demo library: ~1 MB WAVs) and one listener on host 2 whose
eth0 drops LOSS % of the packets both ways (iptables `statistic`, `testbed.sh loss`). Each run
starts a fresh listener (empty state directory, so an empty media cache) and traces it for
DURATION seconds (default 35: at least one track boundary), once per mode:
  cache    the media cache (`media-cache/`, parallel ranged fetches), a track played from its
           partial file while the rest arrives (the default; `partial` is the same mode)
  whole    the media cache, each track played only once its whole file is there (as before;
           PARTYRADIO_MEDIA_CACHE_PARTIAL=0)
  stream   no cache: mpv streams the DJ's URL (PARTYRADIO_MEDIA_CACHE=0)

STATION=catalog: instead of the demo library, the DJ plays three catalog previews (`--add`),
served by the catalog fixture server on the DJ's host as Apple's CDN serves them (1.3 MB WAVs,
byte ranges); first audio is then that of the station's FIRST catalog track, which nothing
fetched ahead.

  start -> first audio   from spawning `listen` to its first trace line with a player position
  starvation gaps        after that, stretches of trace lines without a player position (the
                         player waiting for data or a file), longer than 0.5 s: count and longest
  frozen                 stretches where the player's position stood still mid-track (mpv paused
                         for its cache: the bytes it reads next are not there), longer than 0.3 s
  player error           player position minus the true station position (from the DJ's trace),
                         p50/p99 of |error| once playing

LOSSES (default "0 10 25"), MODES (default "cache stream"), RUNS (default 1), DURATION, STATION
(library or catalog); VERBOSE=1 runs the listener with `-v` (its debug log in l-*.log: the media
cache's transfers, the reader's waits, the corrector's large errors with mpv's cache state).
"""
import os, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, ROOT, TESTBED, percentile, read_trace, require_root, sh, spawn, station_truth, stop,
                      testbed_down, testbed_up)

LOSSES = [float(x) for x in os.environ.get("LOSSES", "0 10 25").split()]
MODES = os.environ.get("MODES", "cache stream").split()
RUNS = int(os.environ.get("RUNS", "1"))
DURATION = float(os.environ.get("DURATION", "35"))
STATION = os.environ.get("STATION", "library")
VERBOSE = os.environ.get("VERBOSE") == "1"
FIXTURE = os.path.join(ROOT, "Tests", "Fixtures", "catalog_fixture_server.py")
PREVIEWS = "697195462,617154366,1440935467"  # One More Time, Get Lucky, CUFF IT: 30 s each


def measure(dj, trace, spawned_ns):
    # The DJ's clock is true here: the time since its trace line is taken on the true clock.
    _, true_station_ms = station_truth(dj, follow_dj_clock=False)
    playing = [line for line in trace if line["player_position_ms"] is not None]
    if not playing:
        return None
    first = playing[0]["true_time_ns"]
    tuned = next((line["true_time_ns"] for line in trace if line["dj_time_ns"] is not None), None)
    errors, gaps, gap_start = [], [], None
    for line in trace:
        if line["true_time_ns"] < first:
            continue
        if line["player_position_ms"] is None:
            gap_start = gap_start or line["true_time_ns"]
            continue
        if gap_start is not None:
            gaps.append((line["true_time_ns"] - gap_start) / 1e9)
            gap_start = None
        truth = true_station_ms(line["true_time_ns"], line["track_id"])
        if truth is not None:
            errors.append(abs(line["player_position_ms"] - truth))
    if gap_start is not None:
        gaps.append((trace[-1]["true_time_ns"] - gap_start) / 1e9)
    long_gaps = [g for g in gaps if g > 0.5]
    # A player waiting for data mid-track still reports its (frozen) position: stretches where it
    # moved less than half as far as the clock, within one track and not paused.
    frozen, frozen_ns, before = [], 0, None
    for line in playing:
        if before is not None and before["track_id"] == line["track_id"] and not line["paused"]:
            elapsed = line["true_time_ns"] - before["true_time_ns"]
            moved_ms = line["player_position_ms"] - before["player_position_ms"]
            if moved_ms * 1e6 < elapsed / 2:
                frozen_ns += elapsed
            else:
                frozen.append(frozen_ns / 1e9)
                frozen_ns = 0
        before = line
    frozen.append(frozen_ns / 1e9)
    stalls = [f for f in frozen if f > 0.3]
    return {
        "tuned": (tuned - spawned_ns) / 1e9 if tuned else float("nan"),
        "first": (first - spawned_ns) / 1e9,
        "gaps": len(long_gaps),
        "stalls": len(stalls),
        "frozen": max(frozen),
        "longest": max(gaps, default=0.0),
        "p50": percentile(errors, 0.5),
        "p90": percentile(errors, 0.9),
        "p99": percentile(errors, 0.99),
        "tracks": len({line["track_id"] for line in playing}),
    }


def catalog_origin(lan, work):
    """Starts the catalog fixture server on host 1 (it serves the previews on the LAN); its URL."""
    address = sh(TESTBED, "ip", lan, "1").strip()
    log = f"{work}/fixture.log"
    # The server exits when its stdin closes: a pipe that stays open until the testbed goes down.
    spawn(lan, 1, log, "/bin/sh", "-c", f"tail -f /dev/null | exec python3 {FIXTURE} 0 --previews {address}")
    deadline = time.time() + 10
    while time.time() < deadline:
        if os.path.exists(log):
            with open(log) as handle:
                ports = [line.split()[1] for line in handle if line.startswith("PORT ")]
            if ports:
                return f"http://{address}:{ports[0]}"
        time.sleep(0.05)
    raise SystemExit("the catalog fixture server did not start")


def run(lan, work, loss, mode, index, origin):
    tag = f"{mode}-{loss:g}-{index}"
    env = dict(os.environ)
    env["PARTYRADIO_MEDIA_CACHE"] = "0" if mode == "stream" else "1"
    env["PARTYRADIO_MEDIA_CACHE_PARTIAL"] = "0" if mode == "whole" else "1"
    sh(TESTBED, "loss", lan, "2", "0")
    dj_env = dict(os.environ)
    catalog = []
    if origin:
        dj_env["PARTYRADIO_ITUNES_URL"] = origin
        catalog = ["--add", PREVIEWS]
    dj_pid = spawn(lan, 1, f"{work}/dj-{tag}.log", BIN, "dj", "--name", "Lossy bench",
                   "--json-events", "--audio-driver", "null", "--trace", f"{work}/dj-{tag}.jsonl",
                   "--state-dir", f"{work}/dj-{tag}", *catalog, env=dj_env)
    time.sleep(2.5)
    if loss > 0:
        sh(TESTBED, "loss", lan, "2", f"{loss:g}", "--both")
    spawned = time.time_ns()
    listener_pid = spawn(lan, 2, f"{work}/l-{tag}.log", BIN, "listen", "Lossy bench",
                         "--json-events", "--audio-driver", "null", "--trace", f"{work}/l-{tag}.jsonl",
                         "--state-dir", f"{work}/l-{tag}", "--timeout", "30", *(["-v"] if VERBOSE else []), env=env)
    time.sleep(DURATION)
    for pid in (listener_pid, dj_pid):
        stop(pid, timeout=0)
    time.sleep(1)
    sh(TESTBED, "loss", lan, "2", "0")
    return measure(read_trace(f"{work}/dj-{tag}.jsonl"), read_trace(f"{work}/l-{tag}.jsonl"), spawned)


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-lossy-")
    lan = testbed_up(2)
    results = []
    try:
        origin = catalog_origin(lan, work) if STATION == "catalog" else None
        for loss in LOSSES:
            for mode in MODES:
                for index in range(RUNS):
                    results.append((loss, mode, run(lan, work, loss, mode, index, origin)))
    finally:
        testbed_down(lan)
    print(f"partyradio lossy-link benchmark: DJ + 1 listener, loss both ways on the listener's host, "
          f"{DURATION:.0f} s per run, "
          f"{'catalog previews (1.3 MB WAVs, fixture CDN)' if STATION == 'catalog' else 'demo library (~1 MB WAVs)'}, "
          f"mpv ao=null, {os.path.basename(BIN)} "
          f"from {os.path.dirname(BIN)}")
    print(f"{'loss':>5} {'media':>7} {'tuned':>7} {'1st audio':>10} {'gaps>0.5s':>9} {'longest':>8} "
          f"{'frozen>0.3s':>11} {'longest':>8} "
          f"{'err p50':>8} {'err p90':>8} {'err p99':>8} {'tracks':>6}")
    for loss, mode, r in results:
        if r is None:
            print(f"{loss:4g}% {mode:>7}   never played")
            continue
        print(f"{loss:4g}% {mode:>7} {r['tuned']:6.2f}s {r['first']:9.2f}s {r['gaps']:9d} {r['longest']:7.2f}s "
              f"{r['stalls']:11d} {r['frozen']:7.2f}s "
              f"{r['p50']:6.2f}ms {r['p90']:6.2f}ms {r['p99']:6.2f}ms {r['tracks']:6d}")
    print(f"traces kept in {work}")


if __name__ == "__main__":
    main()
