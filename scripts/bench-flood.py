#!/usr/bin/env python3
"""Flood benchmark on the namespace testbed (needs root; every node runs in a test namespace).

A DJ on host 1, a listener on host 3, and a hostile guest on host 2 sending forged votes (fresh
made-up keys, made-up signatures: each would cost a full Ed25519 check) at each RATE for SECONDS.
Prints per rate: the rate the flooder reached, the DJ's CPU use during the flood, the datagrams
it dropped by reason, forged votes counted (must be 0), the listener's longest gap between
updates (snapshots come every 0.5 s) and whether it ever called the station silent.
"""
import importlib.util, json, os, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("bench_network", os.path.join(ROOT, "scripts", "bench-network.py"))
net = importlib.util.module_from_spec(spec)
spec.loader.exec_module(net)
RATES = [int(r) for r in os.environ.get("FLOOD_RATES", "20000,50000").split(",")]
SECONDS = float(os.environ.get("FLOOD_SECONDS", "10"))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def events(log, start=0):
    out = []
    with open(log) as handle:
        for line in handle.read().splitlines()[start:]:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def main():
    if os.geteuid() != 0:
        sys.exit("bench: needs root to build the namespace testbed")
    work = tempfile.mkdtemp(prefix="partyradio-bench-flood-")
    lan = net.sh(net.TESTBED, "up", "3").splitlines()[-1]
    try:
        print(f"partyradio flood benchmark: forged votes from one host for {SECONDS:.0f} s per rate, binary {net.BIN}")
        for rate in RATES:
            dj_log, listen_log = f"{work}/dj-{rate}.log", f"{work}/listen-{rate}.log"
            dj = net.spawn(lan, 1, dj_log, "dj", "--name", f"Flood {rate}", "--no-audio", "--json-events",
                           "--state-dir", f"{work}/dj-{rate}")
            started = net.wait_event(dj_log, lambda e: e.get("event") == "station_started")
            net.wait_event(dj_log, lambda e: e.get("event") == "station_published")
            listener = net.spawn(lan, 3, listen_log, "listen", f"Flood {rate}", "--no-audio", "--json-events",
                                 "--state-dir", f"{work}/l-{rate}")
            net.wait_event(listen_log, lambda e: e.get("event") == "tuned_in")
            time.sleep(2)
            mark = net.line_count(listen_log)
            cpu_before, wall_before = cpu_seconds(dj), time.monotonic()
            flood = net.sh(net.TESTBED, "run", lan, "2", "python3", os.path.join(ROOT, "scripts", "forged-flood.py"),
                           started["address"], str(started["port"]), started["id"], str(rate), str(SECONDS))
            cpu = (cpu_seconds(dj) - cpu_before) / (time.monotonic() - wall_before)
            during = events(listen_log, mark)
            times = [e["time_ns"] for e in during if e.get("event") in ("state", "progress")]
            gap = max((b - a for a, b in zip(times, times[1:])), default=0) / 1e6
            silent = sum(1 for e in during if e.get("event") == "station_silent")
            net.stop(listener, "INT")
            net.stop(dj, "INT")
            stopped = net.wait_event(dj_log, lambda e: e.get("event") == "station_stopped")
            counted = sum(1 for e in events(dj_log) if e.get("event") == "vote_counted")
            drops = stopped.get("dropped", {})
            print(f"  {flood}")
            print(f"    DJ CPU during the flood {cpu * 100:5.1f} % of a core; forged votes counted {counted}; "
                  f"drops {json.dumps(drops, sort_keys=True)}")
            print(f"    listener: longest gap between updates {gap:.0f} ms, silent {silent} times")
    finally:
        subprocess.run([net.TESTBED, "down", lan], capture_output=True)


if __name__ == "__main__":
    main()
