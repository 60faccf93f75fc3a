#!/usr/bin/env python3
"""Writes Sources/App/partyradio/partyradio.order: the functions partyradio's commands run, for the
release link (Package.swift's `releaseLinking` hands it to lld as --symbol-ordering-file).

Why: the kernel maps a binary's code in blocks of 16 pages around each page fault (fault-around),
so a DJ that ran 1.4 MB of functions scattered over 16 MB of code held 9.8 MB of it resident.
Placed first, in one run, those functions fill the blocks with code that runs (docs/BINARY.md,
"Code laid out by use").

How: each command runs under valgrind's callgrind on a namespace testbed (needs root): a DJ
`--no-audio` on host 1, a listener playing through mpv's null output on host 2, a listener
`--no-audio` on host 3, then `vote`, `stations`, `chat`, `queue` and `--help` on host 3. Every
function of the binary that any of them ran is listed, those run by more commands first. Run it
again when the code has changed much: names that are gone are skipped by the linker, and new
functions only land where they would without the file.
"""
import collections, os, re, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import read_trace, require_root, spawn, stop, testbed_down, testbed_up, wait_event

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Sources/App/partyradio/partyradio.order")
STATION = "Order file"
RUN = float(os.environ.get("RUN", "20"))
DEFINITION = re.compile(r"^(c?ob|c?fn|fl|fi|fe|cfi|cfl)=\((\d+)\)(?: (.*))?$")


def functions_run(profile, binary):
    """The names of the functions of BINARY that a callgrind profile saw run."""
    names = {"ob": {}, "fn": {}}
    lines = open(profile).read().splitlines()
    for line in lines:
        match = DEFINITION.match(line)
        if match and match.group(3):
            kind = match.group(1)[-2:]
            if kind in names:
                names[kind][match.group(2)] = match.group(3)
    current, found = None, set()
    for line in lines:
        match = DEFINITION.match(line)
        if not match:
            continue
        if match.group(1) == "ob":
            current = names["ob"].get(match.group(2))
        elif match.group(1) == "fn" and current == binary:
            found.add(names["fn"][match.group(2)])
    return found


def main():
    require_root()
    if not shutil.which("valgrind"):
        sys.exit("order-file: needs valgrind (sudo apt install valgrind)")
    subprocess.run(["swift", "build", "-q", "-c", "release", "--static-swift-stdlib", "--product", "partyradio"],
                   cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="partyradio-order-")
    # valgrind cannot read the DWARF 5 that swiftc writes; the symbol table is all it needs.
    binary = f"{work}/partyradio"
    subprocess.run(["strip", "--strip-debug", "-o", binary, f"{ROOT}/.build/release/partyradio"], check=True)
    valgrind = lambda name: ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={work}/{name}.cg"]
    lan = testbed_up(3, "--tag", "bench")
    running = []
    try:
        dj_log = f"{work}/dj.log"
        running.append(spawn(lan, 1, dj_log, *valgrind("dj"), binary, "dj", "--name", STATION, "--no-audio",
                             "--json-events", "--state-dir", f"{work}/dj"))
        wait_event(dj_log, lambda e: e.get("event") == "station_published", timeout=180)
        logs = {}
        for host, name, options in ((2, "listen", ["--audio-driver", "null"]), (3, "listen-quiet", ["--no-audio"])):
            logs[name] = f"{work}/{name}.log"
            running.append(spawn(lan, host, logs[name], *valgrind(name), binary, "listen", STATION, *options,
                                 "--json-events", "--state-dir", f"{work}/{name}"))
        for log in logs.values():
            wait_event(log, lambda e: e.get("event") == "tuned_in", timeout=180)
        time.sleep(RUN)
        testbed = os.path.join(ROOT, "scripts/testbed.sh")
        for name, command in (("vote", ["vote", "up", "--station", STATION]), ("stations", ["stations"]),
                              ("chat", ["chat", "hello", "--station", STATION]),
                              ("queue", ["queue", "--station", STATION]), ("help", ["--help"])):
            subprocess.run([testbed, "run", lan, "3", *valgrind(name), binary, *command, "--state-dir",
                            f"{work}/{name}"] if name != "help" else
                           [testbed, "run", lan, "3", *valgrind(name), binary, *command],
                           capture_output=True, timeout=300)
    finally:
        for pid in reversed(running):
            stop(pid, "INT", timeout=60)
        testbed_down(lan)

    seen = collections.Counter()
    profiles = sorted(name for name in os.listdir(work) if name.endswith(".cg"))
    for profile in profiles:
        for function in functions_run(f"{work}/{profile}", binary):
            seen[function] += 1
    defined = set()
    for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTWw":
            defined.add(fields[2])
    order = sorted((name for name in seen if name in defined), key=lambda name: (-seen[name], name))
    if len(profiles) < 7 or len(order) < 1000:
        sys.exit(f"only {len(profiles)} profiles and {len(order)} functions: see the logs in {work}")
    with open(OUT, "w") as handle:
        handle.write("\n".join(order) + "\n")
    print(f"{OUT}: {len(order)} functions from {len(profiles)} commands ({', '.join(p[:-3] for p in profiles)})")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
