#!/usr/bin/env python3
"""Sync measured at the speaker: partyradio and Snapcast on the same harness (needs root).

A testbed of 1 + LISTENERS hosts (default 3 listeners). Host 1 serves a known test signal (the
partyradio DJ, or snapserver); every other host runs its own PulseAudio with a null sink and
plays the station into it (`partyradio listen --audio-driver pulse`, or `snapclient --player
pulse`). A recorder on each listener host reads the sink's monitor (`parec`) and timestamps what
it reads against CLOCK_MONOTONIC, the one real clock every namespace shares; host 2 has a second
recorder on the same sink, which measures the harness's own floor.

The test signal is white noise from a fixed seed (48 kHz, 16 bit), so any stretch of it is unique:
every second, the 0.25 s of a recording around that instant is found in the signal by
cross-correlation (to a fraction of a sample), which says which position of the signal the speaker
played at that true instant. The skew between two hosts at an instant is the difference of those
positions; reported as p50/p99/max of |skew| over every pair of listener hosts and every second of
MEASURE.

Clocks are made wrong on every node (offset ms, drift ppm; the server gets an offset only, see
SERVER_CLOCK): partyradio through its own testing flags (`--clock-offset-ms`, `--clock-drift-ppm`,
applied to its CLOCK_REALTIME), Snapcast through libfaketime (`FAKETIME="+2.000 x1.000200"`: offset
in seconds, then rate; it fakes CLOCK_MONOTONIC, which Snapcast's steady_clock reads, as well as
CLOCK_REALTIME). The sound servers' clocks are never faked: the speakers run on true time, as real
sound cards would.

Also reported: each listener's start -> first audio at its sink, and the server's start -> its
service resolved by avahi-browse on another host.

With the sync runs, each process's VmRSS (5 s after the listeners start and 60 s later) and its
CPU time over those 60 s. The `startup` part: RUNS rounds (default 5) per system on fresh 2-host
testbeds with true clocks, the server's start -> its service resolved on host 2, and a listener's
start -> its first audio at host 2's sink.

Usage: scripts/bench-speaker.py [partyradio] [snapcast] [startup]   (default: all three)
Environment: PARTYRADIO_BIN, LISTENERS (2-5), WARMUP (s, default 10), MEASURE (s, default 60),
RUNS (startup rounds, default 5), CLOCKS=true (every clock right, no libfaketime), THREADS=1 adds each
process's threads (CPU and wake-ups a second, over the same 60 s), WAKES=1 which of its threads (or
what else) woke which, from 10 s of the kernel's sched_waking events 25 s into those 60 (`perf`,
Debian's linux-perf, installed then; perf takes some CPU meanwhile, so compare CPU figures without
it), VERBOSE=1 prints each second's skew, KEEP=1 keeps the recordings, RECORD_LATENCY_MS (default 5) the
recorders' latency, which sets the null sink's block. TRACE=1 (partyradio): the DJ and the listeners also write `--trace` and `-v` logs, and
each second of MEASURE is printed as every host's error at its speaker against where the station
truly was (from the DJ's trace) beside the error the listener itself measured then. OWN_FILES=1
gives each partyradio listener a copy of the binary and of libmpv's libraries of its own, as on a
host of its own, so that no page is shared with another player (docs/MEDIA.md).
PARTYRADIO_MPV_OPTIONS (`name=value,...`) passes through to the partyradio listeners: other mpv
options (it and the other experimental switches: `partyradio man`, ENVIRONMENT).
"""
import contextlib, os, shutil, signal, subprocess, sys, tempfile, threading, time, wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, TESTBED, keep_or_remove, null_sink, own_files, percentile, require_root, sample_usage, sh, spawn, testbed_down,
                      testbed_up, wake_matrix)

LISTENERS = min(5, max(2, int(os.environ.get("LISTENERS", "3"))))
WARMUP = float(os.environ.get("WARMUP", "10"))
MEASURE = float(os.environ.get("MEASURE", "60"))
RATE = 48000
SIGNAL_SECONDS = 150
SEED = 20261201
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"
# (offset ms, drift ppm): the server, then the listeners in turn, as in scripts/bench-sync.py except
# that the server's clock runs at the true rate: snapserver 0.26 under libfaketime with a rate
# (`x1.00008`) stops sending audio after a few seconds (seen; an offset alone works), so neither
# server gets a drift, to keep the comparison fair. The listeners drift, up to +-200 ppm.
SERVER_CLOCK = (350, 0)
LISTENER_CLOCKS = [(2000, 200), (-2000, -200), (1234, 120), (-777, -50), (1500, -150)]
TRACE = os.environ.get("TRACE") == "1"
THREADS = os.environ.get("THREADS") == "1"
WAKES = os.environ.get("WAKES") == "1"
# Each partyradio listener with a copy of the binary and of libmpv's tree of its own, as on a host of
# its own (benchlib.own_files): so that no page is shared with another player, as there.
OWN_FILES = os.environ.get("OWN_FILES") == "1"
if os.environ.get("CLOCKS") == "true":  # every clock right: the systems' own floor
    SERVER_CLOCK, LISTENER_CLOCKS = (0, 0), [(0, 0)] * 5
PACKAGES = ["pulseaudio", "pulseaudio-utils", "snapserver", "snapclient", "libfaketime", "python3-numpy"] + (
    ["linux-perf"] if WAKES else [])


def ensure_packages():
    """Benchmark-only tools, installed here (never by the tests) with service starts blocked."""
    missing = [p for p in PACKAGES if "install ok installed" not in subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True).stdout]
    if not missing:
        return
    print(f"bench-speaker: installing {' '.join(missing)}", file=sys.stderr)
    policy, backup = "/usr/sbin/policy-rc.d", None
    if os.path.exists(policy):
        backup = tempfile.mktemp(prefix="partyradio-policy-rc.d.")
        shutil.copy2(policy, backup)
    try:
        with open(policy, "w") as handle:
            handle.write("#!/bin/sh\n# partyradio bench: never start services while installing\nexit 101\n")
        os.chmod(policy, 0o755)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], check=True, env=env,
                       stdout=subprocess.DEVNULL)
    finally:
        if backup:
            shutil.move(backup, policy)
        else:
            os.remove(policy)


# ---------------------------------------------------------------------------------------------
# The recorder: runs on a listener host, reads the sink's monitor and timestamps every read.

# The recorder's latency: a null sink renders in blocks of the least latency its clients ask for,
# and hands its monitor each block as it renders it.
RECORD_LATENCY_MS = int(os.environ.get("RECORD_LATENCY_MS", "5"))


def record(server, out, sink="party"):
    """`--record SERVER OUT`: writes OUT.raw (s16le mono 48 kHz) of SINK's monitor and OUT.times
    ("samples ns" a line: the samples read so far, and CLOCK_MONOTONIC when that read returned),
    until SIGTERM."""
    env = dict(os.environ, PULSE_SERVER=server)
    parec = subprocess.Popen(["parec", "-d", f"{sink}.monitor", "--raw", "--format=s16le", f"--rate={RATE}",
                              "--channels=1", f"--latency-msec={RECORD_LATENCY_MS}"], stdout=subprocess.PIPE, env=env)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    samples, pending = 0, b""
    with open(out + ".raw", "wb") as raw, open(out + ".times", "w") as times:
        fd = parec.stdout.fileno()
        while not stop:
            try:
                data = os.read(fd, 65536)
            except InterruptedError:
                continue
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            if not data:
                break
            raw.write(data)
            pending += data
            samples += len(pending) // 2
            pending = pending[len(pending) // 2 * 2:]
            times.write(f"{samples} {now}\n")
    parec.terminate()
    parec.wait()


# ---------------------------------------------------------------------------------------------
# The signal and the analysis.

def make_signal(work):
    """White noise at -12 dBFS RMS from a fixed seed: a WAV for the DJ (mono) and raw stereo PCM
    for snapserver. Returns the signal as float32."""
    import numpy as np
    rng = np.random.default_rng(SEED)
    noise = np.clip(rng.normal(0, 0.25, SIGNAL_SECONDS * RATE), -1, 1)
    pcm = (noise * 32767).astype("<i2")
    os.makedirs(f"{work}/library", exist_ok=True)
    with wave.open(f"{work}/library/test-signal.wav", "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(RATE)
        handle.writeframes(pcm.tobytes())
    np.repeat(pcm, 2).tofile(f"{work}/test-signal.raw")
    return pcm.astype(np.float32) / 32767


def sample_clock(path, rows=None):
    """When the recording's sample 0 reached the monitor, in CLOCK_MONOTONIC ns, and the sink's
    rate against it. A read returns at least as late as its last sample was made: the lower
    envelope of (read time - samples / RATE) is the sink's own timeline. Fitted on the minima of
    20 slices, so that a late read never moves it. `rows`: the .times file, already read."""
    import numpy as np
    if rows is None:
        rows = np.loadtxt(path, dtype=np.float64, ndmin=2)
    count, when = rows[:, 0], rows[:, 1]
    lag = when - count / RATE * 1e9
    slices = np.array_split(np.arange(len(lag)), 20)
    xs = np.array([count[s][np.argmin(lag[s])] for s in slices if len(s)])
    ys = np.array([lag[s].min() for s in slices if len(s)])
    slope, intercept = np.polyfit(xs / RATE, ys, 1)
    return intercept, slope / 1e3  # ns, and ppm off the true clock


class Timeline:
    """A recording's sample index <-> CLOCK_MONOTONIC ns, followed through its length: the lower
    envelope of (read time - samples / RATE) in slices of SLICE_S (default 0.5 s), interpolated
    between them. sample_clock's one line assumes a sink whose rate never changes, and a null sink's
    does: about 270 ppm fast while a stream plays into it, exact while idle (measured, cause not
    found), so a line fitted over minutes is off at a given click by as much as the rate changed
    times the time. TIMELINE=line uses sample_clock's line instead."""

    def __init__(self, path):
        import numpy as np
        rows = np.loadtxt(path, dtype=np.float64, ndmin=2)
        count, when = rows[:, 0], rows[:, 1]
        lag = when - count / RATE * 1e9
        self.start_ns, self.ppm = sample_clock(path, rows)
        self.line = os.environ.get("TIMELINE", "local") == "line"
        slice_samples = max(1, int(float(os.environ.get("SLICE_S", "0.5")) * RATE))
        keys = (count // slice_samples).astype(np.int64)
        xs, ys = [], []
        for key in np.unique(keys):
            inside = np.nonzero(keys == key)[0]
            best = inside[np.argmin(lag[inside])]
            xs.append(count[best])
            ys.append(lag[best])
        self.xs, self.ys = np.array(xs), np.array(ys)

    def at(self, index):
        """When sample `index` reached the monitor, in ns."""
        import numpy as np
        if self.line:
            return self.start_ns + index / RATE * 1e9 * (1 + self.ppm / 1e6)
        return index / RATE * 1e9 + float(np.interp(index, self.xs, self.ys))

    def index(self, ns):
        """The sample that reached the monitor at `ns` (fractional)."""
        import numpy as np
        if self.line:
            return (ns - self.start_ns) / 1e9 * RATE / (1 + self.ppm / 1e6)
        guess = (ns - self.ys[0]) / 1e9 * RATE
        for _ in range(3):
            guess = (ns - float(np.interp(guess, self.xs, self.ys))) / 1e9 * RATE
        return guess


# The correlation looks at the signal below about 2 kHz (a Gaussian low-pass): white noise
# correlates over a single sample, so a window in which the player changed its speed by 0.1 %
# (a few samples of smear) or dropped one sample would no longer match anywhere; band-limited,
# the peak is a few samples wide, survives that, and its centre is still found to a microsecond.
LOWPASS_HZ = 2000
_FILTERED = {}


def lowpass(x):
    import numpy as np
    size = 1 << (len(x) + 256 - 1).bit_length()
    freqs = np.fft.rfftfreq(size, 1 / RATE)
    # sqrt of the Gaussian, so that window and reference together get the whole of it.
    return np.fft.irfft(np.fft.rfft(x, size) * np.exp(-0.5 * (freqs / LOWPASS_HZ) ** 2), size)[: len(x)]


def correlate(window, reference, cache=False):
    """Best lag (fractional samples) of `window` inside `reference`, and the normalised peak
    (1: the same waveform). `cache`: the reference is the whole signal, searched again and again."""
    import numpy as np
    if cache:
        if id(reference) not in _FILTERED:
            _FILTERED[id(reference)] = lowpass(reference)
        ref = _FILTERED[id(reference)]
    else:
        ref = lowpass(reference)
    win = lowpass(window)
    n = len(ref) + len(win)
    size = 1 << (n - 1).bit_length()
    key = (id(reference), size) if cache else None
    if key is not None and key in _FILTERED:
        ref_spectrum = _FILTERED[key]
    else:
        ref_spectrum = np.fft.rfft(ref, size)
        if key is not None:
            _FILTERED[key] = ref_spectrum
    corr = np.fft.irfft(ref_spectrum * np.conj(np.fft.rfft(win, size)), size)[: len(ref) - len(win) + 1]
    k = int(np.argmax(corr))
    frac = 0.0
    if 0 < k < len(corr) - 1:
        a, b, c = corr[k - 1], corr[k], corr[k + 1]
        if min(a, b, c) > 0:
            a, b, c = np.log(a), np.log(b), np.log(c)  # the peak is Gaussian: exact in logs
        if a - 2 * b + c != 0:
            frac = 0.5 * (a - c) / (a - 2 * b + c)
    segment = ref[k:k + len(win)]
    energy = np.sqrt(np.dot(win, win) * np.dot(segment, segment))
    return k + frac, (corr[k] / energy if energy else 0.0)


class Recording:
    def __init__(self, base, reference):
        import numpy as np
        self.name = os.path.basename(base)
        self.audio = np.fromfile(base + ".raw", dtype="<i2").astype(np.float32) / 32767
        self.start_ns, self.rate_ppm = sample_clock(base + ".times")
        self.reference = reference
        self.predicted = None

    def first_audio_ns(self):
        """The true instant of the first sample above -40 dBFS (the signal is at -12 dBFS RMS)."""
        import numpy as np
        loud = np.nonzero(np.abs(self.audio) > 0.01)[0]
        return None if len(loud) == 0 else self.start_ns + loud[0] / RATE * 1e9

    def position_at(self, true_ns, seconds=0.25, step=1.0):
        """The signal position (s) that this speaker played at `true_ns`, found by correlating the
        `seconds` around it; None when that stretch is silent or not the signal. `step`: when the
        next call comes (the search starts where the signal should then be)."""
        import numpy as np
        exact = (true_ns - self.start_ns) / 1e9 * RATE - seconds / 2 * RATE
        first = int(round(exact))
        length = int(seconds * RATE)
        if first < 0 or first + length > len(self.audio):
            return None
        window = self.audio[first:first + length]
        if np.sqrt(np.mean(window ** 2)) < 0.1:
            self.predicted = None
            return None
        found = None
        if self.predicted is not None:
            lo = max(0, int(self.predicted * RATE) - RATE // 5)
            hi = min(len(self.reference), lo + length + 2 * (RATE // 5))
            if hi - lo > length:
                lag, peak = correlate(window, self.reference[lo:hi])
                if peak > 0.6:
                    found = (lo + lag) / RATE
        if found is None:
            lag, peak = correlate(window, self.reference, cache=True)
            if peak < 0.6:
                self.predicted = None
                return None
            found = lag / RATE
        self.predicted = found + step
        # Sample `first` sounded (first - exact) / RATE after true_ns - seconds / 2.
        return found - (first - exact) / RATE + seconds / 2


def wrapped(difference):
    """A difference of signal positions, taken across the loop's seam (snapserver repeats it)."""
    return (difference + SIGNAL_SECONDS / 2) % SIGNAL_SECONDS - SIGNAL_SECONDS / 2


def summary(values):
    values = [abs(v) for v in values]
    if not values:
        return "no samples"
    return (f"p50 {percentile(values, .5):7.3f} ms  p99 {percentile(values, .99):7.3f} ms  "
            f"max {max(values):7.3f} ms  (n={len(values)})")


def analyse(label, work, recorders, reference, measure_from_ns, starts):
    """Skew between every pair of listener hosts (the first recorder of each), and the floor
    (host 2's two recorders), over MEASURE seconds from `measure_from_ns`."""
    recordings = {name: Recording(f"{work}/{name}", reference) for name in recorders}
    for name, rec in recordings.items():
        print(f"  {name}: sink clock {rec.rate_ppm:+.1f} ppm off CLOCK_MONOTONIC, "
              f"{len(rec.audio) / RATE:.1f} s recorded")
    positions = {name: [] for name in recordings}
    windows = int(MEASURE)
    for i in range(windows):
        at = measure_from_ns + i * 1e9
        for name, rec in recordings.items():
            positions[name].append(rec.position_at(at))
    hosts = [name for name in recorders if not name.endswith("b")]
    skews, missing = [], 0
    for a in range(len(hosts)):
        for b in range(a + 1, len(hosts)):
            for pa, pb in zip(positions[hosts[a]], positions[hosts[b]]):
                if pa is None or pb is None:
                    missing += 1
                else:
                    skews.append(wrapped(pa - pb) * 1e3)
    if os.environ.get("VERBOSE"):  # each second's skew of every host against the first, in ms
        for i in range(windows):
            row = [positions[name][i] for name in hosts]
            print(f"    {i:3d} s  " + "  ".join(
                "   -   " if p is None or row[0] is None else f"{wrapped(p - row[0]) * 1e3:+7.3f}" for p in row[1:]))
    floor = [wrapped(pa - pb) * 1e3 for pa, pb in zip(positions["h2"], positions.get("h2b", [])) if pa is not None
             and pb is not None]
    print(f"{label}: inter-host skew at the speaker, {len(hosts)} hosts, {len(hosts) * (len(hosts) - 1) // 2} "
          f"pairs x {windows} windows of 1 s")
    print(f"  skew                 {summary(skews)}" + (f"  ({missing} pair-windows left out: a host's window held silence or a jump)" if missing
                                                         else ""))
    if floor:
        print(f"  harness floor        {summary(floor)}  (two recorders on host 2's sink)")
    for name in hosts:
        first = recordings[name].first_audio_ns()
        started = starts.get(name)
        if first is not None and started is not None:
            print(f"  {name}: start -> first audio at the sink {(first - started) / 1e6:8.1f} ms")
    return {"skews": skews, "floor": floor}


# ---------------------------------------------------------------------------------------------
# The runs.

def start_sound_servers(lan, work, hosts):
    """A PulseAudio per listener host: a null sink `party` (48 kHz stereo) on a socket in /tmp,
    no D-Bus, no idle suspension (the monitor runs without pause, silence included)."""
    for host in hosts:
        home = f"{work}/pa{host}"
        os.makedirs(home, exist_ok=True)
        spawn(lan, host, f"{work}/pa{host}.log", "/usr/bin/env", f"HOME={home}",
              f"XDG_RUNTIME_DIR={home}", "/usr/bin/pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1",
              "--use-pid-file=no", "--disallow-exit", "--log-target=stderr",
              "-L", null_sink("party", RATE),
              "-L", f"module-native-protocol-unix socket={home}/native auth-anonymous=1")
    deadline = time.time() + 15
    for host in hosts:
        while not os.path.exists(f"{work}/pa{host}/native"):
            if time.time() > deadline:
                raise RuntimeError(f"PulseAudio on host {host} did not start: see {work}/pa{host}.log")
            time.sleep(0.05)


def start_recorders(lan, work, hosts):
    pids = []
    for host in hosts:
        for suffix in ("", "b") if host == 2 else ("",):
            pids.append(spawn(lan, host, f"{work}/rec{host}{suffix}.log", "/usr/bin/python3",
                              os.path.abspath(__file__), "--record", f"unix:{work}/pa{host}/native",
                              f"{work}/h{host}{suffix}"))
    time.sleep(1)
    return pids


def stop_all(pids):
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGTERM)
        except ProcessLookupError:
            pass
    time.sleep(1)


def watch_resolved(lan, work, service_type):
    """avahi-browse on the last host, kept running; returns its log path."""
    log = f"{work}/browse.log"
    pid = spawn(lan, LISTENERS + 1, log, "/usr/bin/python3", os.path.abspath(__file__), "--browse", service_type)
    return log, pid


def browse(service_type):
    """`--browse TYPE`: prints CLOCK_MONOTONIC ns when avahi-browse first resolves TYPE."""
    deadline = time.time() + 30
    while time.time() < deadline:
        # Started again when it cannot reach the host's avahi-daemon yet ("Daemon connection failed").
        proc = subprocess.Popen(["avahi-browse", "-rp", service_type], stdout=subprocess.PIPE, text=True)
        for line in proc.stdout:
            if line.startswith("="):
                print(time.clock_gettime_ns(time.CLOCK_MONOTONIC), flush=True)
                proc.terminate()
                return
        proc.wait()
        time.sleep(0.1)


def resolved_at(log, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(log) as handle:
            for line in handle:
                if line.strip().isdigit():
                    return int(line)
        time.sleep(0.05)
    return None


def play_and_sample(roles):
    """Waits out the warm-up and the measurement; samples the processes in `roles` ({label: pid})
    5 s after the listeners were started and 60 s later. Returns report lines."""
    started = time.time()
    threads = {} if THREADS else None
    wakes = {}
    if WAKES:  # 10 s in the middle of the 60 s, beside the sampling
        recorder = threading.Timer(25, lambda: wakes.update(wake_matrix(roles)))
        recorder.start()
    samples = sample_usage(roles, first=5, window=60, threads=threads)
    if WAKES:
        recorder.join()
    time.sleep(max(0, started + WARMUP + MEASURE + 2 - time.time()))
    lines = []
    for label in roles:
        a, b = samples[label]
        if a is None or b is None:
            lines.append(f"  {label:24s} exited before the end")
            continue
        lines.append(f"  {label:24s} VmRSS {a[0]['VmRSS']:6.1f} MB at 5 s, {b[0]['VmRSS']:6.1f} MB at 65 s "
                     f"(anonymous {b[0]['RssAnon']:5.1f} MB, files {b[0]['RssFile']:5.1f} MB); "
                     f"CPU {100 * (b[1] - a[1]) / 60:5.2f} % of a core over those 60 s")
        lines += (threads or {}).get(label, [])
        if wakes.get(label):
            lines.append("      who wakes whom (10 s):")
            lines += wakes[label]
    load = os.getloadavg()
    lines.append(f"  load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return lines


@contextlib.contextmanager
def speaker_lan(hosts):
    """A testbed of HOSTS hosts; yields (lan, pids): at the end every PID put in `pids` is stopped
    and the testbed taken down."""
    lan = testbed_up(hosts, "--tag", "bench-speaker")
    pids = []
    try:
        yield lan, pids
    finally:
        stop_all(pids)
        testbed_down(lan)


@contextlib.contextmanager
def listening_lan(work):
    """speaker_lan with 1 + LISTENERS hosts, a sound server and the recorders on every listener
    host: yields (lan, hosts, pids)."""
    hosts = list(range(2, LISTENERS + 2))
    with speaker_lan(LISTENERS + 1) as (lan, pids):
        start_sound_servers(lan, work, hosts)
        pids += start_recorders(lan, work, hosts)
        yield lan, hosts, pids


def run_partyradio(work, base, reference):
    starts = {}
    with listening_lan(work) as (lan, hosts, pids):
        browse_log, browse_pid = watch_resolved(lan, work, "_partyradio._udp")
        pids.append(browse_pid)
        dj_started = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        roles = {}
        pids.append(spawn(lan, 1, f"{work}/dj.log", BIN, "dj", "--name", "Speaker bench",
                          "--library", f"{base}/library", "--no-audio", "--json-events", "--fresh",
                          "--clock-offset-ms", str(SERVER_CLOCK[0]), "--clock-drift-ppm", str(SERVER_CLOCK[1]),
                          "--state-dir", f"{work}/dj", *(["--trace", f"{work}/dj.jsonl"] if TRACE else [])))
        roles["dj --no-audio"] = pids[-1]
        resolved = resolved_at(browse_log)
        time.sleep(max(0, 2 - (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - dj_started) / 1e9))
        for index, host in enumerate(hosts):
            offset, drift = LISTENER_CLOCKS[index]
            env = dict(os.environ, PULSE_SERVER=f"unix:{work}/pa{host}/native")
            binary = BIN
            if OWN_FILES:
                binary, more = own_files(f"{work}/files{host}")
                env.update(more)
            starts[f"h{host}"] = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            pids.append(spawn(lan, host, f"{work}/listen{host}.log", binary, "listen",
                              "Speaker bench", "--audio-driver", "pulse", "--json-events", "--clock-offset-ms",
                              str(offset), "--clock-drift-ppm", str(drift), "--state-dir", f"{work}/l{host}",
                              *(["--trace", f"{work}/h{host}.jsonl", "-v"] if TRACE else []), env=env))
            roles[f"listen (host {host})"] = pids[-1]
        measure_from = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + WARMUP * 1e9
        resources = play_and_sample(roles)
    recorders = [f"h{h}" for h in hosts] + ["h2b"]
    print(f"\npartyradio ({os.path.basename(BIN)} {sh(BIN, '--version')}): DJ --no-audio on host 1, "
          f"{LISTENERS} x `listen --audio-driver pulse`; clocks: DJ {SERVER_CLOCK[0]:+d} ms {SERVER_CLOCK[1]:+d} ppm, "
          + ", ".join(f"{o:+d} ms {d:+d} ppm" for o, d in LISTENER_CLOCKS[:LISTENERS])
          + " (--clock-offset-ms / --clock-drift-ppm)")
    if resolved:
        print(f"  DJ start -> _partyradio._udp resolved on host {LISTENERS + 1}: {(resolved - dj_started) / 1e6:.1f} ms")
    print("\n".join(resources))
    result = analyse("partyradio", work, recorders, reference, measure_from, starts)
    if TRACE:
        compare_traces(work, [f"h{h}" for h in hosts], reference, measure_from)
    return result


def compare_traces(work, hosts, reference, measure_from_ns, step=0.25):
    """TRACE=1: every `step` s of MEASURE, each host's error at its speaker (the signal position it
    played minus where the station truly was, from the DJ's trace) beside the error its own trace
    gave at the nearest line (player position - latency - station position, on its estimate of
    the DJ clock), in ms; `*` marks a host whose trace has no player position then (a start
    being prepared)."""
    import bisect
    from benchlib import read_trace, station_truth
    # The recorders time on CLOCK_MONOTONIC, the traces on CLOCK_REALTIME: one offset between them.
    real_minus_mono = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    _, true_station_ms = station_truth(read_trace(f"{work}/dj.jsonl"))
    traces = {name: read_trace(f"{work}/{name}.jsonl") for name in hosts}
    times = {name: [line["true_time_ns"] for line in trace] for name, trace in traces.items()}
    recordings = {name: Recording(f"{work}/{name}", reference) for name in hosts}
    print(f"  speaker error / listener's own error (ms) every {step} s; * = no player position in the trace")
    print("    " + "  ".join(f"{name:>22s}" for name in hosts))
    for i in range(int(MEASURE / step)):
        mono = measure_from_ns + i * step * 1e9
        real = mono + real_minus_mono
        cells = []
        for name in hosts:
            trace, at = traces[name], times[name]
            line = None
            if at:
                j = min(max(0, bisect.bisect_left(at, real)), len(at) - 1)
                if j > 0 and abs(at[j - 1] - real) < abs(at[j] - real):
                    j -= 1
                line = trace[j]
            played = recordings[name].position_at(mono, step=step)
            station = true_station_ms(real, line["track_id"]) if line else None
            speaker = "   -   " if played is None or station is None else f"{played * 1e3 - station:+7.3f}"
            own = line.get("sync_error_ms") if line else None
            mark = "*" if line and line.get("player_position_ms") is None else " "
            cells.append(f"{speaker} / {'   -   ' if own is None else f'{own:+7.3f}'}{mark}")
        print(f"    {i * step:6.2f} s  " + "  ".join(f"{c:>22s}" for c in cells))


def faketime(offset_ms, drift_ppm):
    if offset_ms == 0 and drift_ppm == 0:
        return {"FAKETIME": "none"}  # not preloaded at all
    return {"LD_PRELOAD": FAKETIME_LIB, "FAKETIME": f"{offset_ms / 1000:+.3f} x{1 + drift_ppm / 1e6:.6f}",
            "FAKETIME_NO_CACHE": "1"}


def run_snapcast(work, base, reference):
    starts = {}
    with listening_lan(work) as (lan, hosts, pids):
        fifo = f"{work}/snapfifo"
        with open(f"{work}/snapserver.conf", "w") as handle:
            handle.write(f"[server]\ndatadir = {work}/snapserver\n[http]\nenabled = false\n[tcp]\nenabled = false\n"
                         f"[stream]\nsource = pipe://{fifo}?name=test&sampleformat={RATE}:16:2\n"
                         "[logging]\nfilter = *:info\n")
        os.makedirs(f"{work}/snapserver", exist_ok=True)
        browse_log, browse_pid = watch_resolved(lan, work, "_snapcast._tcp")
        pids.append(browse_pid)
        env = dict(os.environ, **faketime(*SERVER_CLOCK))
        server_started = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        pids.append(spawn(lan, 1, f"{work}/snapserver.log", "/usr/bin/snapserver", "-c",
                          f"{work}/snapserver.conf", env=env))
        roles = {"snapserver": pids[-1]}
        resolved = resolved_at(browse_log)
        while not os.path.exists(fifo):
            time.sleep(0.05)
        # The signal in a loop, as fast as snapserver reads it (it paces the pipe on its own clock).
        pids.append(spawn(lan, 1, f"{work}/feeder.log", "/bin/sh", "-c",
                          f"while :; do cat {base}/test-signal.raw; done > {fifo}"))
        time.sleep(max(0, 2 - (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - server_started) / 1e9))
        server = sh(TESTBED, "ip", lan, "1")
        for index, host in enumerate(hosts):
            env = dict(os.environ, PULSE_SERVER=f"unix:{work}/pa{host}/native", **faketime(*LISTENER_CLOCKS[index]))
            starts[f"h{host}"] = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            pids.append(spawn(lan, host, f"{work}/snapclient{host}.log", "/usr/bin/snapclient",
                              "-h", server, "--player", "pulse", "--hostID", f"bench{host}", "--logsink", "stderr",
                              env=env))
            roles[f"snapclient (host {host})"] = pids[-1]
        measure_from = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + WARMUP * 1e9
        resources = play_and_sample(roles)
    recorders = [f"h{h}" for h in hosts] + ["h2b"]
    version = sh("/usr/bin/snapserver", "--version").splitlines()[0]
    print(f"\nSnapcast ({version}): snapserver (pipe source, flac, 1000 ms buffer) on host 1, {LISTENERS} x "
          f"`snapclient --player pulse`; clocks: server {faketime(*SERVER_CLOCK)['FAKETIME']!r}, "
          + ", ".join(repr(faketime(*c)["FAKETIME"]) for c in LISTENER_CLOCKS[:LISTENERS]) + " (libfaketime)")
    if resolved:
        print(f"  snapserver start -> _snapcast._tcp resolved on host {LISTENERS + 1}: "
              f"{(resolved - server_started) / 1e6:.1f} ms")
    print("\n".join(resources))
    return analyse("Snapcast", work, recorders, reference, measure_from, starts)


def run_startup(work, base, reference):
    """RUNS rounds per system, each on a fresh testbed of 2 hosts, clocks true: the server's start
    -> its service resolved by avahi-browse on host 2, and the listener's start on host 2 -> its
    first audio at host 2's sink."""
    import numpy as np
    runs = max(1, int(os.environ.get("RUNS", "5")))
    figures = {}
    snapserver_conf = f"{work}/snapserver.conf"
    for round_ in range(runs):
        for system in ("partyradio", "snapcast"):
            folder = f"{work}/{system}{round_}"
            os.makedirs(folder)
            with speaker_lan(2) as (lan, pids):
                start_sound_servers(lan, folder, [2])
                pids.append(spawn(lan, 2, f"{folder}/rec.log", "/usr/bin/python3",
                                  os.path.abspath(__file__), "--record", f"unix:{folder}/pa2/native", f"{folder}/h2"))
                browse_log = f"{folder}/browse.log"
                pids.append(spawn(lan, 2, browse_log, "/usr/bin/python3", os.path.abspath(__file__),
                                  "--browse", "_partyradio._udp" if system == "partyradio" else "_snapcast._tcp"))
                time.sleep(1)
                env = dict(os.environ, PULSE_SERVER=f"unix:{folder}/pa2/native")
                if system == "partyradio":
                    server_started = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                    pids.append(spawn(lan, 1, f"{folder}/dj.log", BIN, "dj", "--name",
                                      "Speaker bench", "--library", f"{base}/library", "--no-audio", "--json-events",
                                      "--state-dir", f"{folder}/dj"))
                else:
                    fifo = f"{folder}/snapfifo"
                    with open(snapserver_conf, "w") as handle:
                        handle.write(f"[server]\ndatadir = {folder}\n[http]\nenabled = false\n[tcp]\n"
                                     f"enabled = false\n[stream]\nsource = pipe://{fifo}?name=test&sampleformat="
                                     f"{RATE}:16:2\n")
                    server_started = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                    pids.append(spawn(lan, 1, f"{folder}/snapserver.log", "/usr/bin/snapserver",
                                      "-c", snapserver_conf))
                    while not os.path.exists(fifo):
                        time.sleep(0.01)
                    pids.append(spawn(lan, 1, f"{folder}/feeder.log", "/bin/sh", "-c",
                                      f"while :; do cat {base}/test-signal.raw; done > {fifo}"))
                resolved = resolved_at(browse_log)
                time.sleep(max(0, 3 - (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - server_started) / 1e9))
                listen_started = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                if system == "partyradio":
                    pids.append(spawn(lan, 2, f"{folder}/listen.log", BIN, "listen",
                                      "Speaker bench", "--audio-driver", "pulse", "--json-events", "--state-dir",
                                      f"{folder}/l2", env=env))
                else:
                    pids.append(spawn(lan, 2, f"{folder}/snapclient.log", "/usr/bin/snapclient",
                                      "-h", sh(TESTBED, "ip", lan, "1"), "--player", "pulse", "--logsink", "stderr",
                                      env=env))
                deadline = time.time() + 20
                while time.time() < deadline:
                    audio = np.fromfile(f"{folder}/h2.raw", dtype="<i2")
                    if np.any(np.abs(audio) > 328):
                        break
                    time.sleep(0.1)
                time.sleep(1)
            first = Recording(f"{folder}/h2", reference).first_audio_ns()
            entry = figures.setdefault(system, {"resolved": [], "first audio": []})
            if resolved:
                entry["resolved"].append((resolved - server_started) / 1e6)
            if first:
                entry["first audio"].append((first - listen_started) / 1e6)
    print(f"\nstart-up: {runs} rounds each, a fresh 2-host testbed a round, clocks true; server on host 1, "
          "avahi-browse and the listener (into PulseAudio) on host 2")
    names = {"partyradio": ("dj --no-audio start -> _partyradio._udp resolved", "listen start -> first audio at the sink"),
             "snapcast": ("snapserver start -> _snapcast._tcp resolved", "snapclient start -> first audio at the sink")}
    for system, entry in figures.items():
        for key, name in zip(("resolved", "first audio"), names[system]):
            values = sorted(entry[key])
            if values:
                print(f"  {name:48s} n={len(values)}  min {values[0]:7.1f} ms  p50 {percentile(values, .5):7.1f} ms  "
                      f"max {values[-1]:7.1f} ms")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--record":
        return record(sys.argv[2], sys.argv[3])
    if len(sys.argv) > 1 and sys.argv[1] == "--browse":
        return browse(sys.argv[2])
    require_root()
    ensure_packages()
    try:
        import numpy  # noqa: F401
    except ImportError:  # a Python of its own (pyenv, a venv) without it: Debian's has it now
        os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__), *sys.argv[1:]])
    parts = sys.argv[1:] or ["partyradio", "snapcast", "startup"]
    base = tempfile.mkdtemp(prefix="partyradio-speaker-")
    reference = make_signal(base)
    print(f"sync at the speaker: {LISTENERS} listener hosts, PulseAudio null sinks at {RATE} Hz, {WARMUP:.0f} s "
          f"warm-up, {MEASURE:.0f} s measured; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    try:
        for part in parts:
            work = f"{base}/{part}"
            os.makedirs(work)
            {"partyradio": run_partyradio, "snapcast": run_snapcast, "startup": run_startup}[part](work, base, reference)
    finally:
        keep_or_remove(base)


if __name__ == "__main__":
    main()
