#!/usr/bin/env python3
"""Synchronisation benchmark on the namespace testbed (needs root).

A DJ and LISTENERS (at least 4) listeners on separate hosts, every clock wrong on purpose
(offsets up to +-2 s, drifts up to +-200 ppm), all with `--trace`. After WARMUP seconds the
traces are compared over MEASURE seconds (at least 60) against the machine's true clock, which
every namespace shares:

  logical error  = a listener's estimate of the DJ clock (and so of the station position)
                   minus the DJ clock's true reading at that true instant
  player error   = where a listener's player is minus where the station truly is then
  converge time  = from a listener's first trace line to the moment after which its logical
                   error stays within 1 ms and its player error within 20 ms
"""
import os, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import BIN, percentile, read_trace, require_root, spawn, station_truth, testbed_down, testbed_up

LISTENERS = max(4, int(os.environ.get("LISTENERS", "4")))
# The LAN's families (`testbed.sh up --ip`): v4 (default), v6 (no IPv4 at all) or dual.
IP = os.environ.get("IP", "v4")
WARMUP = float(os.environ.get("WARMUP", "5"))
MEASURE = max(60.0, float(os.environ.get("MEASURE", "60")))
# (offset ms, drift ppm) per node; the DJ's clock is wrong too: nothing may rely on it being right.
DJ_CLOCK = (350, 80)
LISTENER_CLOCKS = [(2000, 200), (-2000, -200), (1234, 120), (-777, -50), (1500, -150), (-300, 180)]


def summary(values):
    values = [abs(v) for v in values]
    return f"p50 {percentile(values, .5):8.3f} ms  p99 {percentile(values, .99):8.3f} ms  max {max(values):8.3f} ms"


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-sync-")
    lan = testbed_up(LISTENERS + 1, "--ip", IP)
    try:
        common = ["--json-events", "--audio-driver", "null"]
        spawn(lan, 1, f"{work}/dj.log", BIN, "dj", "--name", "Sync bench", *common,
              "--trace", f"{work}/dj.jsonl", "--clock-offset-ms", str(DJ_CLOCK[0]), "--clock-drift-ppm",
              str(DJ_CLOCK[1]), "--state-dir", f"{work}/dj")
        time.sleep(2)
        for index in range(LISTENERS):
            offset, drift = LISTENER_CLOCKS[index % len(LISTENER_CLOCKS)]
            spawn(lan, index + 2, f"{work}/l{index}.log", BIN, "listen", "Sync bench", *common,
                  "--trace", f"{work}/l{index}.jsonl", "--clock-offset-ms", str(offset),
                  "--clock-drift-ppm", str(drift), "--state-dir", f"{work}/l{index}")
        time.sleep(WARMUP + MEASURE + 1)
    finally:
        testbed_down(lan)

    dj_trace = read_trace(f"{work}/dj.jsonl")
    start = next(line["true_time_ns"] for line in dj_trace if line["dj_time_ns"] is not None)
    true_dj_time, true_station_ms = station_truth(dj_trace)

    logical, player, converge, track_changes = [], [], [], 0
    for index in range(LISTENERS):
        trace = read_trace(f"{work}/l{index}.jsonl")
        if not trace:
            print(f"listener {index}: no trace")
            continue
        joined = trace[0]["true_time_ns"]
        window_start = start + (WARMUP + 2) * 1e9
        samples = []
        for line in trace:
            if line["dj_time_ns"] is None:
                samples.append((line["true_time_ns"], None, None))
                continue
            l_err = (line["dj_time_ns"] - true_dj_time(line["true_time_ns"])) / 1e6
            truth = true_station_ms(line["true_time_ns"], line["track_id"])
            p_err = None
            if truth is not None and line["player_position_ms"] is not None:
                p_err = line["player_position_ms"] - truth
            samples.append((line["true_time_ns"], l_err, p_err))
            if line["true_time_ns"] >= window_start:
                logical.append(l_err)
                if p_err is not None:
                    player.append(p_err)
        settled_at = None
        for t, l_err, p_err in reversed(samples):
            if l_err is None or abs(l_err) > 1 or (p_err is not None and abs(p_err) > 20):
                break
            settled_at = t
        converge.append(((settled_at or samples[-1][0]) - joined) / 1e9)

    print(f"partyradio sync benchmark ({IP}): DJ + {LISTENERS} listeners on separate hosts, {MEASURE:.0f} s measured "
          f"after {WARMUP:.0f} s warm-up, clocks off by up to +-2 s and +-200 ppm, mpv ao=null")
    print(f"logical position error ({len(logical):5d} samples)  {summary(logical)}")
    print(f"player position error  ({len(player):5d} samples)  {summary(player)}")
    print(f"time to converge (per listener): " + ", ".join(f"{c:.2f} s" for c in converge)
          + f"  (max {max(converge):.2f} s)")
    print(f"traces kept in {work}")


if __name__ == "__main__":
    main()
