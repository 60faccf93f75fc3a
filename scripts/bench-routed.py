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
import bisect, json, os, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTBED = os.path.join(ROOT, "scripts", "testbed.sh")
BIN = os.environ.get("PARTYRADIO_BIN", os.path.join(ROOT, ".build", "release", "partyradio"))
RUNS = max(3, int(os.environ.get("RUNS", "5")))
VOTES = max(5, int(os.environ.get("VOTES", "20")))
MEASURE = max(20.0, float(os.environ.get("MEASURE", "30")))
ZONE = "party.example"


def sh(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


def events(log):
    out = []
    with open(log) as handle:
        for line in handle:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def wait_event(log, predicate, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for event in events(log):
            if predicate(event):
                return event
        time.sleep(0.01)
    raise RuntimeError(f"timed out waiting in {log}")


def stop(pid, sig="TERM"):
    subprocess.run(["kill", f"-{sig}", str(pid)], capture_output=True)
    for _ in range(500):
        if not os.path.exists(f"/proc/{pid}"):
            return
        time.sleep(0.01)


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def report(name, values, unit="ms", digits=1):
    values = [abs(v) for v in values]
    if not values:
        print(f"{name:52s} no samples")
        return
    print(f"{name:52s} n={len(values):4d}  p50 {percentile(values, .5):8.{digits}f} {unit}  "
          f"p99 {percentile(values, .99):8.{digits}f} {unit}  max {max(values):8.{digits}f} {unit}")


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


def read_trace(path):
    return [line for line in events(path)]


def player_errors(dj_trace, trace, since_ns):
    dj = [line for line in dj_trace if line["dj_time_ns"] is not None]
    dj_true = [line["true_time_ns"] for line in dj]

    def true_dj_time(true_ns):
        i = min(max(1, bisect.bisect_left(dj_true, true_ns)), len(dj) - 1)
        a, b = dj[i - 1], dj[i]
        slope = (b["dj_time_ns"] - a["dj_time_ns"]) / (b["true_time_ns"] - a["true_time_ns"])
        return a["dj_time_ns"] + slope * (true_ns - a["true_time_ns"])

    errors = []
    for line in trace:
        if line["true_time_ns"] < since_ns or line["player_position_ms"] is None:
            continue
        i = min(max(0, bisect.bisect_left(dj_true, line["true_time_ns"])), len(dj) - 1)
        near = dj[i] if dj[i]["track_id"] == line["track_id"] else (dj[i - 1] if i > 0 else None)
        if not near or near["track_id"] != line["track_id"] or near["station_position_ms"] is None \
                or near["paused"]:
            continue
        truth = near["station_position_ms"] + (true_dj_time(line["true_time_ns"]) - near["dj_time_ns"]) / 1e6
        errors.append(line["player_position_ms"] - truth)
    return errors


def main():
    if os.geteuid() != 0:
        sys.exit("bench: needs root to build the namespace testbed")
    work = tempfile.mkdtemp(prefix="partyradio-routed-")
    lan = sh(TESTBED, "up", "3", "--subnets", "2").splitlines()[-1]
    try:
        server = start_bind(lan, work, 4)
        dns = ["--domain", ZONE, "--dns-server", server]
        dj_args = ["--no-audio", "--json-events", *dns, "--dns-key", f"{work}/partyradio.key",
                   "--state-dir", f"{work}/dj"]
        listed, listing_runs, withdrawn = [], [], []
        for run in range(RUNS):
            started = now_ns()
            dj = int(sh(TESTBED, "spawn", lan, "1", f"{work}/dj{run}.log", BIN, "dj", "--name", f"Routed {run}",
                        *dj_args))
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
            stop(dj)
            while sh(TESTBED, "run", lan, "3", "dig", "+short", f"@{server}", "PTR", f"_partyradio._udp.{ZONE}"):
                if now_ns() - quit_at > 20e9:
                    raise RuntimeError("the records were not withdrawn")
                time.sleep(0.01)
            withdrawn.append((now_ns() - quit_at) / 1e6)

        # Playing: one listener on the DJ's subnet, one across the router.
        play = ["--json-events", "--audio-driver", "null"]
        dj = int(sh(TESTBED, "spawn", lan, "1", f"{work}/dj-play.log", BIN, "dj", "--name", "Routed play", *play,
                    "--trace", f"{work}/dj.jsonl", "--clock-offset-ms", "350", "--clock-drift-ppm", "80", *dns,
                    "--dns-key", f"{work}/partyradio.key", "--state-dir", f"{work}/dj"))
        wait_event(f"{work}/dj-play.log", lambda e: e.get("event") == "station_published")
        listeners = {}
        # The near one finds the station over mDNS and hears the group; the far one uses the domain.
        for role, host, clock, extra in (("near", 2, ("1234", "120"), []), ("far", 3, ("-777", "-50"), dns)):
            listeners[role] = int(sh(
                TESTBED, "spawn", lan, str(host), f"{work}/{role}.log", BIN, "listen", "Routed play", *play,
                "--trace", f"{work}/{role}.jsonl", "--clock-offset-ms", clock[0], "--clock-drift-ppm", clock[1],
                *extra, "--state-dir", f"{work}/{role}"))
        joined = max(wait_event(f"{work}/{role}.log", lambda e: e.get("event") == "tuned_in")["time_ns"]
                     for role in listeners)
        acks, votes = [], []
        for index in range(VOTES):
            begun = time.monotonic_ns()
            out = sh(TESTBED, "run", lan, "3", BIN, "vote", "up" if index % 2 == 0 else "down", "--json",
                     "--station", "Routed play", *dns, "--state-dir", f"{work}/voter")
            votes.append((time.monotonic_ns() - begun) / 1e6)
            acks.append(json.loads(out)["latency_ms"])
        time.sleep(max(0.0, MEASURE - (now_ns() - joined) / 1e9))
        for pid in listeners.values():
            stop(pid, "INT")
        stop(dj)
    finally:
        subprocess.run([TESTBED, "down", lan], capture_output=True)

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
        silent = sum(1 for e in events(f"{work}/{role}.log") if e.get("event") == "station_silent")
        print(f"{'':52s} station-silent events: {silent}")
    print(f"logs and traces kept in {work}")


if __name__ == "__main__":
    main()
