#!/usr/bin/env python3
"""Beyond one link: unicast DNS-SD with BIND 9 across a router (needs root; namespace testbed).

`testbed.sh up 3 --subnets 2`: hosts 1 and 2 on one subnet, host 3 on the other, host 4 the
router, which forwards unicast only and runs BIND 9 for party.example. The DJ (host 1) publishes
there with a TSIG key. Prints:
  - DJ start -> listed by `stations --domain` on the other subnet (RUNS runs), and the same
    command's whole run time
  - DJ quit -> its PTR record gone from the zone
  - vote across the router: the DJ's ack as the voter measured it, and the whole `vote` command
  - over MEASURE seconds (default 30), the player error of a listener on the DJ's subnet
    (multicast snapshots) and of one across the router (the DJ's unicast copies), against the
    DJ's trace, and how many station-silent events each reported
"""
import json, os, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, TESTBED, now_ns, read_trace, require_root, sh, spawn, station_truth, stop, testbed_down,
                      testbed_up, wait_event)
import benchlib

RUNS = max(3, int(os.environ.get("RUNS", "5")))
VOTES = max(5, int(os.environ.get("VOTES", "20")))
MEASURE = max(20.0, float(os.environ.get("MEASURE", "30")))
ZONE = "party.example"


def report(name, values, digits=1):
    benchlib.report(name, [abs(v) for v in values], width=52, count=4, digits=digits)


def start_bind(lan, work, router):
    address = sh(TESTBED, "ip", lan, str(router))
    key = sh(TESTBED, "run", lan, str(router), "tsig-keygen", "-a", "hmac-sha256", "partyradio")
    with open(f"{work}/partyradio.key", "w") as handle:
        handle.write(key + "\n")
    with open(f"{work}/{ZONE}.zone", "w") as handle:
        handle.write(f"$TTL 60\n@ IN SOA ns.{ZONE}. admin.{ZONE}. ( 1 60 60 600 60 )\n@ IN NS ns.{ZONE}.\n"
                     f"ns IN A {address}\n")
    with open(f"{work}/named.conf", "w") as handle:
        handle.write(f'include "{work}/partyradio.key";\n'
                     f'options {{ directory "{work}"; listen-on {{ any; }}; listen-on-v6 {{ none; }}; '
                     f'recursion no; dnssec-validation no; pid-file "{work}/named.pid"; '
                     f'session-keyfile "{work}/session.key"; }};\n'
                     f'zone "{ZONE}" {{ type primary; file "{work}/{ZONE}.zone"; '
                     f'allow-update {{ key "partyradio"; }}; }};\n')
    sh(TESTBED, "spawn", lan, str(router), f"{work}/named.log", "named", "-g", "-u", "root", "-c",
       f"{work}/named.conf")
    deadline = time.time() + 15
    while time.time() < deadline:
        if "running" in open(f"{work}/named.log").read():
            return address
        time.sleep(0.05)
    raise RuntimeError("named did not start")


def player_errors(dj_trace, trace, since_ns):
    _, true_station_ms = station_truth(dj_trace)
    errors = []
    for line in trace:
        if line["true_time_ns"] < since_ns or line["player_position_ms"] is None:
            continue
        truth = true_station_ms(line["true_time_ns"], line["track_id"])
        if truth is not None:
            errors.append(line["player_position_ms"] - truth)
    return errors


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-routed-")
    lan = testbed_up(3, "--subnets", "2")
    try:
        server = start_bind(lan, work, 4)
        dns = ["--domain", ZONE, "--dns-server", server]
        dj_args = ["--no-audio", "--json-events", *dns, "--dns-key", f"{work}/partyradio.key",
                   "--state-dir", f"{work}/dj"]
        listed, listing_runs, withdrawn = [], [], []
        for run in range(RUNS):
            started = now_ns()
            dj = spawn(lan, 1, f"{work}/dj{run}.log", BIN, "dj", "--name", f"Routed {run}", *dj_args)
            while True:
                begun = time.monotonic_ns()
                out = sh(TESTBED, "run", lan, "3", BIN, "stations", "--json", *dns, "--state-dir", f"{work}/obs")
                if any(s.get("name") == f"Routed {run}" for s in json.loads(out or "[]")):
                    listed.append((now_ns() - started) / 1e6)
                    listing_runs.append((time.monotonic_ns() - begun) / 1e6)
                    break
                if now_ns() - started > 20e9:
                    raise RuntimeError("the station was not listed across the router")
            quit_at = now_ns()
            stop(dj, timeout=5.0)
            while sh(TESTBED, "run", lan, "3", "dig", "+short", f"@{server}", "PTR", f"_partyradio._udp.{ZONE}"):
                if now_ns() - quit_at > 20e9:
                    raise RuntimeError("the records were not withdrawn")
                time.sleep(0.01)
            withdrawn.append((now_ns() - quit_at) / 1e6)

        # Playing: one listener on the DJ's subnet, one across the router.
        play = ["--json-events", "--audio-driver", "null"]
        dj = spawn(lan, 1, f"{work}/dj-play.log", BIN, "dj", "--name", "Routed play", *play,
                   "--trace", f"{work}/dj.jsonl", "--clock-offset-ms", "350", "--clock-drift-ppm", "80", *dns,
                   "--dns-key", f"{work}/partyradio.key", "--state-dir", f"{work}/dj")
        wait_event(f"{work}/dj-play.log", lambda e: e.get("event") == "station_published", timeout=20, poll=0.01)
        listeners = {}
        # The near one finds the station over mDNS and hears the group; the far one uses the domain.
        for role, host, clock, extra in (("near", 2, ("1234", "120"), []), ("far", 3, ("-777", "-50"), dns)):
            listeners[role] = spawn(
                lan, host, f"{work}/{role}.log", BIN, "listen", "Routed play", *play,
                "--trace", f"{work}/{role}.jsonl", "--clock-offset-ms", clock[0], "--clock-drift-ppm", clock[1],
                *extra, "--state-dir", f"{work}/{role}")
        joined = max(wait_event(f"{work}/{role}.log", lambda e: e.get("event") == "tuned_in", timeout=20,
                                poll=0.01)["time_ns"] for role in listeners)
        acks, votes = [], []
        for index in range(VOTES):
            begun = time.monotonic_ns()
            out = sh(TESTBED, "run", lan, "3", BIN, "vote", "up" if index % 2 == 0 else "down", "--json",
                     "--station", "Routed play", *dns, "--state-dir", f"{work}/voter")
            votes.append((time.monotonic_ns() - begun) / 1e6)
            acks.append(json.loads(out)["latency_ms"])
        time.sleep(max(0.0, MEASURE - (now_ns() - joined) / 1e9))
        for pid in listeners.values():
            stop(pid, "INT", timeout=5.0)
        stop(dj, timeout=5.0)
    finally:
        testbed_down(lan)

    print(f"partyradio routed benchmark: DJ on one subnet, guests on another, BIND 9 on the router; "
          f"{RUNS} runs, {VOTES} votes, {MEASURE:.0f} s of play, binary {BIN}")
    report("DJ start -> listed by `stations --domain` across", listed)
    report("  one `stations --domain` run that listed it", listing_runs)
    report("DJ quit -> PTR record gone", withdrawn)
    report("vote across the router -> acknowledged", acks)
    report("whole `vote --domain` command", votes)
    dj_trace = read_trace(f"{work}/dj.jsonl")
    for role, name in (("near", "on the DJ's subnet (multicast)"), ("far", "across the router (unicast)")):
        errors = player_errors(dj_trace, read_trace(f"{work}/{role}.jsonl"), joined + 3e9)
        report(f"player error, listener {name}", errors, digits=3)
        silent = sum(1 for e in read_trace(f"{work}/{role}.log") if e.get("event") == "station_silent")
        print(f"{'':52s} station-silent events: {silent}")
    print(f"logs and traces kept in {work}")


if __name__ == "__main__":
    main()
