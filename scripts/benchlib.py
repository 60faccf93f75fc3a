"""What the benchmark scripts (scripts/bench-*.py) share: the testbed and the binary, reading
`--json-events` logs and `--trace` files, percentiles, and a process's CPU and memory from /proc.

A script finds this module beside itself, whatever the working directory:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from benchlib import BIN, TESTBED, sh, ...

Rule one holds here too: nothing in this module multicasts; every node runs on a testbed host
(`testbed.sh spawn` / `run`), never in the root network namespace.
"""
import bisect, importlib.util, json, os, re, shutil, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTBED = os.path.join(ROOT, "scripts", "testbed.sh")
BIN = os.environ.get("PARTYRADIO_BIN", os.path.join(ROOT, ".build", "release", "partyradio"))
TICKS = os.sysconf("SC_CLK_TCK")


def load_script(file):
    """A sibling bench script as a module (`bench-live.py` cannot be imported by name: the hyphen)."""
    name = os.path.splitext(file)[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", file))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def keep_or_remove(folder, what="recordings"):
    """The run's folder: kept and named with KEEP=1, removed otherwise."""
    if os.environ.get("KEEP") == "1":
        print(f"{what} kept in {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)


def sh(*args, check=True, **kw):
    """Runs a command, returns its standard output stripped (raises on failure unless check=False)."""
    return subprocess.run(args, check=check, capture_output=True, text=True, **kw).stdout.strip()


def null_sink(name, rate=48000):
    """The `module-null-sink` argument of every bench's recorded sink (a 48 kHz stereo null sink
    named NAME, without rewinds). A sink that can rewind has its monitor hold back, for a recorder
    that cannot (parec's stream), min(max_rewind, the sink's latency): a whole block when the sink
    rendered it in one piece, only the larger part when the piece its stream gave was split
    (pa_source_output_push's delay queue). Which happens follows how the player's writes fall
    against the sink's render grid, so with 5 ms blocks a recording's timeline stepped by up to half
    a block for a fraction of a second and single clicks read 1-2 ms late. Without rewinds the
    monitor hands out every block the same block early (docs/notes/2026-12-07-speakers-timeline.md)."""
    return f"module-null-sink sink_name={name} rate={rate} channels=2 norewinds=1"


def now_ns():
    """CLOCK_REALTIME in ns: the one clock every namespace on the machine shares."""
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


def require_root():
    if os.geteuid() != 0:
        sys.exit("bench: needs root to build the namespace testbed")


def testbed_up(hosts, *options):
    """`testbed.sh up HOSTS OPTIONS...`; returns the testbed's name."""
    return sh(TESTBED, "up", str(hosts), *options).splitlines()[-1]


def testbed_down(lan):
    subprocess.run([TESTBED, "down", lan], capture_output=True)


def spawn(lan, host, log, *command, **kw):
    """Starts COMMAND on a testbed host in the background, its output appended to LOG; returns its PID."""
    return int(sh(TESTBED, "spawn", lan, str(host), log, *command, **kw).splitlines()[-1])


def read_trace(path, start=0):
    """Every JSON line of a `--trace` file or a `--json-events` log, from line `start` on; other
    lines are skipped, and a file not there yet reads as empty."""
    try:
        with open(path) as handle:
            lines = handle.read().splitlines()[start:]
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def line_count(log):
    """Lines in LOG so far: a `start` for read_trace and wait_event that skips them."""
    with open(log) as handle:
        return len(handle.read().splitlines())


def wait_event(log, predicate, timeout=15.0, start=0, poll=0.005):
    """The first event of LOG (from line `start` on) that `predicate` accepts, waiting for it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for event in read_trace(log, start):
            if isinstance(event, dict) and predicate(event):
                return event
        time.sleep(poll)
    raise RuntimeError(f"timed out waiting in {log}")


def stop(pid, sig="TERM", timeout=3.0):
    """Sends SIG to PID and waits up to `timeout` s for it to be gone."""
    subprocess.run(["kill", f"-{sig}", str(pid)], capture_output=True)
    deadline = time.monotonic() + timeout
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.01)


def percentile(values, share):
    """The value at rank round(share * (n - 1)) of the sorted values (nan when there are none)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def upper_percentile(values, share):
    """The value at rank floor(share * n) of the sorted values (nan when there are none): the
    definition bench-many.py and bench-web-listen.py have always printed (p50 of an even count is
    the upper of the two middle values)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def report(name, values, width=44, count=3, size=8, digits=1, extra=""):
    """One line: NAME, n, p50, p99 and max of VALUES (ms)."""
    if not values:
        print(f"{name:{width}s} no samples")
        return
    print(f"{name:{width}s} n={len(values):{count}d}  p50 {percentile(values, .5):{size}.{digits}f} ms  "
          f"p99 {percentile(values, .99):{size}.{digits}f} ms  max {max(values):{size}.{digits}f} ms{extra}")


def cpu_seconds(pid):
    """User + system CPU time of PID so far, in seconds (/proc/PID/stat utime + stime)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def proc_status(pid):
    """/proc/PID/status as {field: value text}."""
    with open(f"/proc/{pid}/status") as handle:
        return {name: value.strip() for name, _, value in (line.partition(":") for line in handle)}


def usage(pid):
    """VmRSS, RssAnon, RssFile (MB) and CPU time (s) of a process, or None once it is gone."""
    try:
        fields = proc_status(pid)
        cpu = cpu_seconds(pid)
    except (FileNotFoundError, ProcessLookupError):
        return None
    return {key: int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "RssAnon", "RssFile")}, cpu


def sample_usage(roles, first=5.0, window=60.0, threads=None):
    """usage() of each process in `roles` ({label: pid}) `first` s from now and `window` s after
    that: {label: (first sample, second sample)}, a sample None when the process was gone. With a
    dict `threads`, also fills threads[label] with thread_lines() over the same window."""
    started = time.time()
    time.sleep(first)
    before = {label: usage(pid) for label, pid in roles.items()}
    before_threads = {label: thread_usage(pid) for label, pid in roles.items()} if threads is not None else {}
    time.sleep(max(0, started + first + window - time.time()))
    after = {label: (before[label], usage(pid)) for label, pid in roles.items()}
    for label, pid in roles.items():
        if threads is not None:
            threads[label] = thread_lines(before_threads[label], thread_usage(pid), window)
    return after


def thread_usage(pid):
    """{thread name: [CPU s, voluntary context switches]} of a process's threads (those of one
    name added up); {} once it is gone. A voluntary switch is the thread going to sleep: each is a
    wake-up after it."""
    ticks = os.sysconf("SC_CLK_TCK")
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as handle:
                stat = handle.read()
            with open(f"/proc/{pid}/task/{tid}/status") as handle:
                switches = next(int(line.split()[1]) for line in handle if line.startswith("voluntary_ctxt_switches"))
        except (FileNotFoundError, ProcessLookupError, StopIteration):
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        entry = out.setdefault(name, [0.0, 0])
        entry[0] += (int(fields[11]) + int(fields[12])) / ticks
        entry[1] += switches
    return out


def thread_lines(before, after, window):
    """Report lines from two thread_usage() samples `window` s apart: each thread name's CPU (% of
    a core) and wake-ups a second, the busiest first."""
    rows = []
    for name, (cpu, switches) in after.items():
        cpu0, switches0 = before.get(name, (0.0, 0))
        rows.append((100 * (cpu - cpu0) / window, (switches - switches0) / window, name))
    rows.sort(reverse=True)
    return [f"      {name:20s} CPU {cpu:5.2f} %  {wakes:6.1f} wake-ups/s" for cpu, wakes, name in rows if cpu or wakes]


def wake_matrix(roles, seconds=10.0):
    """Who wakes whom in the processes of `roles` ({label: pid}): records the kernel's
    sched:sched_waking events machine-wide for `seconds` (`perf`, Debian's linux-perf) and returns
    {label: report lines}, each line a waking thread and a woken one of that process with the
    wake-ups a second, the most frequent first. A waker in another process is shown as
    `<its name> (other)`; a wake-up from an interrupt (a timer, a datagram's arrival) counts for
    whatever thread the interrupt came in on, `swapper` when the CPU was idle."""
    names = {}

    def list_threads():  # before and after the recording: threads that came or went meanwhile count too
        for label, pid in roles.items():
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except (FileNotFoundError, ProcessLookupError):
                continue
            for tid in tids:
                try:
                    with open(f"/proc/{pid}/task/{tid}/comm") as handle:
                        names[tid] = (label, handle.read().strip())
                except (FileNotFoundError, ProcessLookupError):
                    continue

    list_threads()
    data = f"/tmp/partyradio-wakes-{os.getpid()}.data"
    try:
        subprocess.run(["perf", "record", "-q", "-e", "sched:sched_waking", "-a", "-o", data, "--", "sleep",
                        str(seconds)], capture_output=True, check=True)
        script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,trace"], capture_output=True,
                                text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        return {label: [f"      wake-ups not recorded: {error}"] for label in roles}
    finally:
        if os.path.exists(data):
            os.remove(data)
    list_threads()
    counts = {}
    for line in script.splitlines():
        # "<waker comm> <waker tid> comm=<wakee comm> pid=<wakee tid> prio=... target_cpu=..."
        head, _, trace = line.partition(" comm=")
        waker = head.split()
        woken = re.match(r".*? pid=(\d+) ", trace)
        wakee = names.get(woken.group(1)) if woken else None
        if wakee is None or len(waker) < 2:
            continue
        label = wakee[0]
        mine = names.get(waker[-1])
        source = mine[1] if mine is not None and mine[0] == label else f"{' '.join(waker[:-1])} (other)"
        counts[(label, source, wakee[1])] = counts.get((label, source, wakee[1]), 0) + 1
    lines = {label: [] for label in roles}
    for (label, source, target), count in sorted(counts.items(), key=lambda item: -item[1]):
        if count / seconds >= 0.5:
            lines[label].append(f"      {source:24s} -> {target:16s} {count / seconds:6.1f} a second")
    return lines


def station_truth(dj_trace, follow_dj_clock=True):
    """From the DJ's trace, where the station truly was: returns (true_dj_time, true_station_ms).

    true_dj_time(true_ns): the DJ clock's reading at a true instant (the DJ clock is local = true +
    offset + drift * (true - origin): linear, so interpolated between trace lines).
    true_station_ms(true_ns, track): the station position of `track` then, from the nearest trace
    line (or the one before it when the nearest is already another track); None when that line is
    another track, has no position or is paused. The station moves at rate 1 on the DJ clock; with
    `follow_dj_clock` False the time since that line is taken on the true clock instead."""
    dj = [line for line in dj_trace if line["dj_time_ns"] is not None]
    dj_true = [line["true_time_ns"] for line in dj]

    def true_dj_time(true_ns):
        i = min(max(1, bisect.bisect_left(dj_true, true_ns)), len(dj) - 1)
        a, b = dj[i - 1], dj[i]
        slope = (b["dj_time_ns"] - a["dj_time_ns"]) / (b["true_time_ns"] - a["true_time_ns"])
        return a["dj_time_ns"] + slope * (true_ns - a["true_time_ns"])

    def true_station_ms(true_ns, track):
        i = min(max(0, bisect.bisect_left(dj_true, true_ns)), len(dj) - 1)
        near = dj[i] if dj[i]["track_id"] == track else (dj[i - 1] if i > 0 else None)
        if not near or near["track_id"] != track or near["station_position_ms"] is None or near["paused"]:
            return None
        if follow_dj_clock:
            return near["station_position_ms"] + (true_dj_time(true_ns) - near["dj_time_ns"]) / 1e6
        return near["station_position_ms"] + (true_ns - near["true_time_ns"]) / 1e6

    return true_dj_time, true_station_ms


def own_files(folder):
    """A copy of the binary and of libmpv's library tree (glibc's own libraries aside) in FOLDER,
    and the environment that makes a process load them: returns (binary, env). Hosts of their own
    share no page, but the testbed's namespaces share one kernel and its page cache, and a page that
    another process maps too is not paged out (docs/MEDIA.md, "What starting leaves resident"): so
    each player that should behave as on a host of its own gets files of its own."""
    os.makedirs(f"{folder}/lib", exist_ok=True)
    binary = f"{folder}/partyradio"
    shutil.copy2(BIN, binary)
    libmpv = next(line.split(" => ")[1].strip() for line in sh("ldconfig", "-p").splitlines()
                  if "libmpv.so.2 " in line and " => " in line)
    glibc = ("/libc.so", "/libm.so", "/ld-linux", "/libpthread.so", "/libdl.so", "/librt.so")
    for line in sh("ldd", libmpv).splitlines() + [f"x => {libmpv} (0)"]:
        if " => /" in line:
            path = line.split(" => ")[1].split(" (")[0]
            if not any(part in path for part in glibc):
                shutil.copy(path, f"{folder}/lib/{os.path.basename(path)}")
    return binary, {"LD_LIBRARY_PATH": f"{folder}/lib"}

