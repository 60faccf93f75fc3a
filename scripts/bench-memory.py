#!/usr/bin/env python3
"""Memory benchmark on the namespace testbed (needs root; issue 11, item 8).

A DJ `--no-audio` on host 1 (its generated demo library), a listener playing through mpv's null
output (`listen NAME --audio-driver null`) on host 2 and a `listen NAME --no-audio` on host 3.
Each process is sampled 5 s after the listeners were started and again at DURATION s (default
65): /proc/PID/status (VmRSS, RssAnon, RssFile) and /proc/PID/stat (utime + stime). Prints a row
a process: VmRSS at 5 s and at the end, its anonymous and file-backed resident memory at the end,
and its CPU (% of one core) between the two samples; then, for each process, the TOP (default 8)
mapped files with the most resident memory at the end (/proc/PID/smaps, a file's mappings added
up), and what all its file mappings come to. A file mapping's Rss in smaps includes its private
copied pages (relocated data), which /proc/PID/status counts as RssAnon, not RssFile: so the files'
sum is a little more than RssFile.

The playing listener runs with `-v`, so that its log shows it really played ("playing from"), and
with `--trace` (the DJ too): 5 s after it first plays, it drops its mappings of the file pages it
touched while it started (docs/MEDIA.md, "What starting leaves resident"), and its player error
(against where the station truly was, from the DJ's trace) is reported for the 5 s before that and
the 5 s after, so a page fault that held the audio up would show. PARTYRADIO_PLAYER_PAGEOUT=0
turns that release off, for comparisons. OWN_FILES=1 gives the playing listener a copy of the
binary of its own (benchlib.own_files: and of libmpv's tree), as on a host of its own.
PARTYRADIO_BIN picks the binary (default .build/release/partyradio); DURATION (at least 10)
shortens the run; THREADS=1 adds each process's threads (CPU and wake-ups a second).
"""
import datetime, glob, os, re, shutil, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, own_files, percentile, read_trace, require_root, sample_usage, spawn, station_truth, stop, testbed_down,
                      testbed_up, wait_event)

DURATION = max(10.0, float(os.environ.get("DURATION", "65")))
FIRST = 5.0
TOP = max(1, int(os.environ.get("TOP", "8")))
THREADS = os.environ.get("THREADS") == "1"
OWN_FILES = os.environ.get("OWN_FILES") == "1"
STATION = "Memory bench"
MAPPING = re.compile(r"^[0-9a-f]+-[0-9a-f]+ ")


def mapped_files(pid):
    """{path: resident MB} over every file mapping of PID (/proc/PID/smaps), its mappings added up."""
    sizes, path = {}, None
    with open(f"/proc/{pid}/smaps") as handle:
        for line in handle:
            if MAPPING.match(line):
                fields = line.split(maxsplit=5)
                path = fields[5].strip() if len(fields) > 5 and fields[5].startswith("/") else None
            elif path and line.startswith("Rss:"):
                sizes[path] = sizes.get(path, 0) + int(line.split()[1]) / 1024
    return sizes


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-memory-")
    lan = testbed_up(3, "--tag", "bench")
    roles, logs = {}, {}
    try:
        logs["dj --no-audio"] = f"{work}/dj.log"
        dj_started = time.time()
        roles["dj --no-audio"] = spawn(lan, 1, logs["dj --no-audio"], BIN, "dj", "--name", STATION, "--no-audio",
                                       "--json-events", "--trace", f"{work}/dj.jsonl", "--state-dir", f"{work}/dj")
        wait_event(logs["dj --no-audio"], lambda e: e.get("event") == "station_published", timeout=20)
        published = time.time() - dj_started
        for host, label, options in ((2, "listen (ao=null)", ["--audio-driver", "null", "-v", "--trace",
                                                              f"{work}/listen2.jsonl"]),
                                     (3, "listen --no-audio", ["--no-audio"])):
            logs[label] = f"{work}/listen{host}.log"
            binary, env = BIN, None
            if host == 2 and OWN_FILES:
                binary, more = own_files(f"{work}/own")
                env = dict(os.environ, **more)
            roles[label] = spawn(lan, host, logs[label], binary, "listen", STATION, *options, "--json-events",
                                 "--state-dir", f"{work}/l{host}", **({"env": env} if env else {}))
        threads = {} if THREADS else None
        samples = sample_usage(roles, first=FIRST, window=DURATION - FIRST, threads=threads)
        files = {label: mapped_files(pid) for label, pid in roles.items() if samples[label][1] is not None}
    finally:
        for pid in roles.values():
            stop(pid, "INT")
        testbed_down(lan)

    tuned = {label: any(e.get("event") == "tuned_in" for e in read_trace(log) if isinstance(e, dict))
             for label, log in logs.items()}
    with open(logs["listen (ao=null)"]) as handle:
        played = "[player] playing from" in handle.read()
    print(f"partyradio memory benchmark: 3 namespace hosts, DJ --no-audio (demo library, published "
          f"{published:.1f} s after its start), a listener playing through mpv's null output "
          f"({'played' if played else 'NEVER PLAYED'}), a listener --no-audio"
          f"{'' if all(tuned[l] for l in logs if l.startswith('listen')) else ' (a listener NEVER TUNED IN)'}; "
          f"sampled {FIRST:.0f} s after the listeners' start and at {DURATION:.0f} s; binary {BIN}")
    end = f"at {DURATION:.0f} s"
    print(f"{'process':20s} {'VmRSS at 5 s':>13s} {end:>10s} {'anonymous':>10s} {'files':>10s} {'CPU':>16s}")
    for label, (a, b) in samples.items():
        if a is None or b is None:
            print(f"{label:20s} exited before the end (see {logs[label]})")
            continue
        cpu = 100 * (b[1] - a[1]) / (DURATION - FIRST)
        print(f"{label:20s} {a[0]['VmRSS']:10.1f} MB {b[0]['VmRSS']:7.1f} MB {b[0]['RssAnon']:7.1f} MB "
              f"{b[0]['RssFile']:7.1f} MB {cpu:6.2f} % of a core")
        for line in (threads or {}).get(label, []):
            print(line)
    if THREADS:
        print("load average at the end: " + " ".join(f"{value:.2f}" for value in os.getloadavg()))
    for label, sizes in files.items():
        print(f"\n{label}: the {TOP} mapped files with the most resident memory ({len(sizes)} files mapped, "
              f"{sum(sizes.values()):.1f} MB resident in their mappings, private copies included)")
        for path, mb in sorted(sizes.items(), key=lambda item: -item[1])[:TOP]:
            print(f"  {mb:6.1f} MB  {path}")
    page_out_report(work, logs["listen (ao=null)"])
    print(f"\nlogs kept in {work}")


def page_out_report(work, log):
    """The playing listener's release of its start-up pages (its -v line) and its player error in the 5 s either side."""
    with open(log) as handle:
        line = next((l for l in handle if "start-up pages" in l), None)
    if line is None:
        print("\nlisten (ao=null): no release of the start-up pages (off with PARTYRADIO_PLAYER_PAGEOUT=0; after 5 s of playing)")
        return
    stamp = line.split(" ", 1)[0]
    at = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    at_ns = at.timestamp() * 1e9
    print(f"\nlisten (ao=null): {line.split('] ', 1)[1].strip()}")
    _, truth = station_truth(read_trace(f"{work}/dj.jsonl"))
    before, after = [], []
    for sample in read_trace(f"{work}/listen2.jsonl"):
        expected = truth(sample["true_time_ns"], sample["track_id"])
        if expected is None or sample.get("player_position_ms") is None:
            continue
        error = abs(sample["player_position_ms"] - expected)
        if at_ns - 5e9 <= sample["true_time_ns"] < at_ns:
            before.append(error)
        elif at_ns <= sample["true_time_ns"] < at_ns + 5e9:
            after.append(error)
    for name, values in (("5 s before", before), ("5 s after", after)):
        if values:
            print(f"  player error {name}: |p50| {percentile(values, 0.5):.3f} ms, |p99| {percentile(values, 0.99):.3f} ms,"
                  f" max {max(values):.3f} ms ({len(values)} samples)")


if __name__ == "__main__":
    main()
