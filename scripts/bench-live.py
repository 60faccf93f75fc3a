#!/usr/bin/env python3
"""Live stations side by side with Snapcast 0.26 (needs root): `make bench-live`, `scripts/bench live`.

One testbed, every process on its hosts (rule one: snapserver, snapclient, the DJ, the listeners,
PulseAudio and the recorders all run inside the testbed's namespaces, never in the root one):

  host 1      the server: `partyradio dj --live pipe:FIFO` or `snapserver` with a pipe source
              (48000:16:2), and the writer that feeds its FIFO a click track in real time;
  hosts 2, 3  a listener each (`partyradio listen`, or `snapclient --player pulse`) playing into a
              PulseAudio null sink of that host's own, recorded from its monitor (parec, each read
              stamped with CLOCK_MONOTONIC, the one clock all namespaces share);
  hosts 4-6   light listeners for the bytes figures only (`listen --no-audio`, which still
              receives the group; `snapclient --player file:filename=null`).

The click track: a 440 Hz tone at 8,000 with a 5 ms full-scale click at irregular intervals
(400-700 ms from a fixed seed, so that a click is known by its neighbours even 1 s late). The writer
writes 10 ms chunks at their real-time instants, no lead, and notes when it wrote each chunk that
starts a click. A click is heard where the recording first reaches 16,000 (twice the tone), as
Tests/IntegrationTests LiveLANTests.pipeToSpeaker hears it; the heard clicks are matched to the written
ones by the most common delay.

Each configuration runs the systems one after the other, the order alternated:
  delay  a click written -> heard at hosts 2 and 3: p50/p95 (ms); the skew of hosts 2 and 3 on the
         same clicks: p50/p99 of |skew|; CPU over the measured seconds (the DJ and its capture thread
         `dj-live-capture`, a listener and its `partyradio-live` thread; snapserver, snapclient)
  clocks the same with every clock wrong (DJ/snapserver +350 ms; listeners +2 s +200 ppm and
         -2 s -200 ppm; partyradio through --clock-offset-ms/--clock-drift-ppm, Snapcast through
         libfaketime as in bench-speaker.py)
  loss   10 % and 25 % of packets dropped at random on host 3's way in (the testbed's `loss`,
         iptables' statistic match in host 3's namespace): gaps >= 10 ms at host 3 (stretches where
         the recording's envelope stays under a quarter of the tone), and its delay
  bytes  what host 1 sends (its eth0's tx bytes, /proc/PID/net/dev of the server: Ethernet frames,
         everything the host sends) with 1, 5 and 20 listeners, as a multiple of the Opus bitrate
         (128 kbit/s = 16 kB/s)
Snapcast runs at its default buffer (1000 ms) and at 100 ms (`buffer = 100` in the stream's
section), in every part but bytes (the buffer does not change what it sends), with its default codec
(FLAC); `snap100opus` and `snap1000opus` run it with `codec = opus`, like partyradio's carrier (so a
listener's CPU compares decoders alike).

Usage: scripts/bench-live.py [delay] [clocks] [loss] [bytes]   (default: all four)
Environment: PARTYRADIO_BIN; WARMUP (s, default 4): the stream before measuring (BYTES_WARMUP, default
12, for bytes: past the listeners' first 10 s of clock settling); MEASURE (s, default
20): each delay/clocks run; LOSS_SECONDS (default 20; the issue's figure is 60); BYTES_SECONDS
(default 10); SYSTEMS (default `partyradio,snap1000,snap100`; `partyradio30` is partyradio with
`dj --latency 30`, any `partyradioN` with `--latency N`; `snap100opus`, `snap1000opus`: Snapcast with
Opus); DJ_ARGS (more options for every
partyradio DJ, e.g. `--live-frame-ms 20` or `--live-repairs always`); KEEP=1 keeps the recordings;
VERBOSE=1 prints every click's delay.
"""
import os, random, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import BIN, TESTBED, keep_or_remove, load_script, null_sink, percentile, require_root, sh, spawn, testbed_down, testbed_up, thread_usage

HERE = os.path.dirname(os.path.abspath(__file__))
speaker = load_script("bench-speaker.py")

WARMUP = float(os.environ.get("WARMUP", "4"))
# The bytes are a station's steady state: past a listener's first 10 s, when it pings its DJ 5 times
# a second to settle its clock (2 a second after; docs/CLOCK-SYNC.md, "Ping schedule").
BYTES_WARMUP = float(os.environ.get("BYTES_WARMUP", "12"))
MEASURE = float(os.environ.get("MEASURE", "20"))
LOSS_SECONDS = float(os.environ.get("LOSS_SECONDS", "20"))
BYTES_SECONDS = float(os.environ.get("BYTES_SECONDS", "10"))
SYSTEMS = os.environ.get("SYSTEMS", "partyradio,snap1000,snap100").split(",")
DJ_ARGS = os.environ.get("DJ_ARGS", "").split()
VERBOSE = os.environ.get("VERBOSE") == "1"
RATE = 48000
CHUNK = 480  # 10 ms
TONE, CLICK, HEARD = 8000, 30000, 16000
SEED = 20261206
OPUS_BYTES_PER_S = 128_000 / 8
NAME = "Live bench"
AUDIO_HOSTS = [2, 3]
LIGHT_HOSTS = [4, 5, 6]
HOSTS = 6
SERVER_CLOCK = (350, 0)  # snapserver under libfaketime with a rate stops sending (bench-speaker.py)
LISTENER_CLOCKS = {2: (2000, 200), 3: (-2000, -200)}
PACKAGES = ["pulseaudio", "pulseaudio-utils", "snapserver", "snapclient", "libfaketime", "python3-numpy",
            "iptables"]


def mono():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


# ---------------------------------------------------------------------------------------------
# The writer: runs on host 1, feeds the FIFO in real time.

def click_offsets(seconds):
    """Sample indices at which a click starts: every 400-700 ms (a multiple of 10 ms), seeded."""
    rng = random.Random(SEED)
    at, out = 0.5, []
    while at < seconds - 0.1:
        out.append(int(round(at * RATE)) // CHUNK * CHUNK)
        at += rng.randrange(40, 71) / 100
    return out


def write(path, seconds, log):
    """`--write FIFO SECONDS LOG`: the click track in 10 ms chunks at their real-time instants; LOG
    gets "click INDEX NS" (CLOCK_MONOTONIC just before the chunk that starts click INDEX was written)."""
    import numpy as np
    total = int(seconds * RATE) // CHUNK * CHUNK
    t = np.arange(total)
    samples = (TONE * np.sin(2 * np.pi * 440 * t / RATE)).astype(np.int32)
    clicks = click_offsets(seconds)
    for start in clicks:
        burst = np.where((np.arange(240) // 24) % 2 == 0, CLICK, -CLICK)
        samples[start:start + 240] = burst
    pcm = np.repeat(samples.astype("<i2"), 2).tobytes()
    starts = {c // CHUNK: i for i, c in enumerate(clicks)}
    with open(path, "wb", buffering=0) as pipe, open(log, "w") as out:
        begin = mono()
        for n in range(total // CHUNK):
            due = begin + n * CHUNK * 1_000_000_000 // RATE
            wait = due - mono()
            if wait > 0:
                time.sleep(wait / 1e9)
            now = mono()
            pipe.write(pcm[n * CHUNK * 4:(n + 1) * CHUNK * 4])
            if n in starts:
                out.write(f"click {starts[n]} {now}\n")
                out.flush()
        out.write(f"done {mono()}\n")


# ---------------------------------------------------------------------------------------------
# The analysis.

def written_clicks(log):
    out = {}
    with open(log) as handle:
        for line in handle:
            parts = line.split()
            if parts[0] == "click":
                out[int(parts[1])] = int(parts[2])
    return out


def heard_clicks(base):
    """CLOCK_MONOTONIC ns of every click in the recording BASE (.raw, .times), and the recording
    with its sample-0 time."""
    import numpy as np
    audio = np.fromfile(base + ".raw", dtype="<i2").astype(np.int32)
    timeline = speaker.Timeline(base + ".times")
    start_ns = timeline.start_ns
    loud = np.nonzero(np.abs(audio) >= HEARD)[0]
    heard, last = [], -RATE
    for index in loud:
        if index - last >= RATE // 5:  # 200 ms apart (clicks are 400 ms or more apart)
            heard.append(timeline.at(index))
            last = index
    return heard, audio, start_ns


def match(written, heard, window_ns):
    """{click index: heard ns} for the clicks written inside window_ns: each heard click against the
    written one whose delay is nearest the most common delay (5 ms bins, 0-3 s)."""
    import numpy as np
    times = sorted(written.items(), key=lambda kv: kv[1])
    candidates = []
    for h in heard:
        for _, w in times:
            d = h - w
            if 0 <= d <= 3e9:
                candidates.append(d)
    if not candidates:
        return {}, None
    bins = np.bincount((np.array(candidates) / 5e6).astype(int))
    mode = (np.argmax(bins) + 0.5) * 5e6
    out = {}
    for h in heard:
        best = min(times, key=lambda kv: abs(h - kv[1] - mode))
        if abs(h - best[1] - mode) <= 100e6 and window_ns[0] <= best[1] <= window_ns[1]:
            out[best[0]] = h
    return out, mode


def gaps(audio, start_ns, from_ns, to_ns):
    """Stretches >= 10 ms between from_ns and to_ns where the envelope (the largest |sample| over
    2.5 ms, more than a period of the tone) stays under a quarter of the tone: [(at ns, ms)]."""
    import numpy as np
    a = max(0, int((from_ns - start_ns) / 1e9 * RATE))
    b = min(len(audio), int((to_ns - start_ns) / 1e9 * RATE))
    if b - a < RATE:
        return None
    block = 24  # 0.5 ms
    x = np.abs(audio[a:b])
    x = x[:len(x) // block * block].reshape(-1, block).max(axis=1)
    env = np.maximum.reduce([x[i:len(x) - 4 + i] for i in range(5)])  # 2.5 ms
    quiet = env < TONE // 4
    out, run = [], 0
    for i, q in enumerate(np.append(quiet, False)):
        if q:
            run += 1
        elif run:
            ms = run * 0.5 + 2.0  # a silence of L makes L - 2 ms of quiet windows
            if ms >= 10:
                out.append((start_ns + (a + (i - run) * block) / RATE * 1e9, ms))
            run = 0
    return out


def ms(values, share):
    return percentile(values, share) / 1e6


def snap_buffer(system):
    """A Snapcast system's buffer in ms: `snap100`, `snap100opus` -> 100; `snap1000`, `snap1000opus` -> 1000."""
    return int(system[len("snap"):].removesuffix("opus"))


# ---------------------------------------------------------------------------------------------
# The runs.

class Bench:
    def __init__(self, work):
        self.work = work
        self.lan = testbed_up(HOSTS, "--tag", "bench-live")
        self.pulse = []
        for host in AUDIO_HOSTS:
            home = f"{work}/pa{host}"
            os.makedirs(home, exist_ok=True)
            self.pulse.append(spawn(self.lan, host, f"{home}.log", "/usr/bin/env", f"HOME={home}",
                                    f"XDG_RUNTIME_DIR={home}", "/usr/bin/pulseaudio", "-n", "--daemonize=no",
                                    "--exit-idle-time=-1", "--use-pid-file=no", "--disallow-exit",
                                    "--log-target=stderr", "-L",
                                    null_sink("party", RATE), "-L",
                                    f"module-native-protocol-unix socket={home}/native auth-anonymous=1"))
        deadline = time.time() + 15
        for host in AUDIO_HOSTS:
            while not os.path.exists(f"{work}/pa{host}/native"):
                if time.time() > deadline:
                    raise RuntimeError(f"PulseAudio on host {host} did not start: {work}/pa{host}.log")
                time.sleep(0.05)
        self.server_ip = sh(TESTBED, "ip", self.lan, "1")
        self.count = 0

    def close(self):
        stop_all(self.pulse)
        testbed_down(self.lan)

    def pulse_env(self, host):
        return {"PULSE_SERVER": f"unix:{self.work}/pa{host}/native"}

    def run(self, system, seconds, clocks=False, loss=0.0, light=0, audio_hosts=AUDIO_HOSTS, warmup=WARMUP):
        """One run: the server, the listeners, the recorders and the writer for warmup + seconds.
        Returns the figures as a dict."""
        self.count += 1
        folder = f"{self.work}/{self.count:02d}-{system}"
        os.makedirs(folder)
        pids, roles = [], {}
        fifo = f"{folder}/fifo"
        os.mkfifo(fifo, 0o666)
        env = dict(os.environ)
        try:
            if loss:
                sh(TESTBED, "loss", self.lan, "3", str(loss), "--in")
            if system.startswith("partyradio"):
                clock = ["--clock-offset-ms", str(SERVER_CLOCK[0]), "--clock-drift-ppm",
                         str(SERVER_CLOCK[1])] if clocks else []
                latency = system[len("partyradio"):]
                pids.append(spawn(self.lan, 1, f"{folder}/dj.log", BIN, "dj", "--name", NAME, "--live",
                                  f"pipe:{fifo}?sampleformat=48000:16:2", "--json-events", "--fresh", "--no-audio",
                                  "--state-dir", f"{folder}/dj", *clock,
                                  *(["--latency", latency] if latency else []), *DJ_ARGS))
                roles["dj"] = pids[-1]
                wait_for(f"{folder}/dj.log", '"station_published"')
            else:
                buffer = snap_buffer(system)
                codec = "opus" if system.endswith("opus") else "flac"
                with open(f"{folder}/snapserver.conf", "w") as handle:
                    handle.write(f"[server]\ndatadir = {folder}/snapserver\n[http]\nenabled = false\n[tcp]\n"
                                 f"enabled = false\n[stream]\nsource = pipe://{fifo}?name=live&sampleformat="
                                 f"{RATE}:16:2&mode=read\nbuffer = {buffer}\ncodec = {codec}\n[logging]\nfilter = *:info\n")
                os.makedirs(f"{folder}/snapserver")
                senv = dict(env, **speaker.faketime(*SERVER_CLOCK)) if clocks else env
                pids.append(spawn(self.lan, 1, f"{folder}/snapserver.log", "/usr/bin/snapserver", "-c",
                                  f"{folder}/snapserver.conf", env=senv))
                roles["snapserver"] = pids[-1]
                time.sleep(1.5)
            for host in audio_hosts:
                lenv = dict(env, **self.pulse_env(host))
                if system.startswith("partyradio"):
                    clock = ["--clock-offset-ms", str(LISTENER_CLOCKS[host][0]), "--clock-drift-ppm",
                             str(LISTENER_CLOCKS[host][1])] if clocks else []
                    pids.append(spawn(self.lan, host, f"{folder}/listen{host}.log", BIN, "listen", NAME,
                                      "--json-events", "--state-dir", f"{folder}/l{host}", *clock, env=lenv))
                else:
                    if clocks:
                        lenv.update(speaker.faketime(*LISTENER_CLOCKS[host]))
                    # At a 100 ms buffer, snapclient's PulseAudio stream must be shorter than its default
                    # 100 ms (with it, it plays 60 ms and skips 60 ms, seen): 20 ms, partyradio's.
                    player = "pulse:buffer_time=20" if snap_buffer(system) == 100 else "pulse"
                    pids.append(spawn(self.lan, host, f"{folder}/snapclient{host}.log", "/usr/bin/snapclient",
                                      "-h", self.server_ip, "--player", player, "--hostID", f"live{host}",
                                      "--logsink", "stderr", env=lenv))
                roles[f"h{host}"] = pids[-1]
            for i in range(light):
                host = LIGHT_HOSTS[i % len(LIGHT_HOSTS)]
                if system.startswith("partyradio"):
                    pids.append(spawn(self.lan, host, f"{folder}/light{i}.log", BIN, "listen", NAME, "--no-audio",
                                      "--json-events", "--state-dir", f"{folder}/light{i}"))
                else:
                    pids.append(spawn(self.lan, host, f"{folder}/light{i}.log", "/usr/bin/snapclient", "-h",
                                      self.server_ip, "--player", "file:filename=null", "--hostID", f"light{i}",
                                      "--instance", str(i + 2), "--logsink", "stderr"))
            for host in audio_hosts:
                pids.append(spawn(self.lan, host, f"{folder}/rec{host}.log", "/usr/bin/python3",
                                  os.path.join(HERE, "bench-speaker.py"), "--record",
                                  self.pulse_env(host)["PULSE_SERVER"], f"{folder}/h{host}"))
            if system.startswith("partyradio"):
                for host in audio_hosts:
                    wait_for(f"{folder}/listen{host}.log", '"tuned_in"', 30)
            time.sleep(2)
            total = warmup + seconds
            writer = spawn(self.lan, 1, f"{folder}/writer.out", "/usr/bin/python3", os.path.abspath(__file__),
                           "--write", fifo, str(total + 1), f"{folder}/writer.log")
            pids.append(writer)
            began = mono()
            time.sleep(warmup)
            net0 = net_dev(roles.get("dj") or roles["snapserver"])
            cpu0 = {label: thread_usage(pid) for label, pid in roles.items()}
            t0 = mono()
            time.sleep(seconds)
            net1 = net_dev(roles.get("dj") or roles["snapserver"])
            cpu1 = {label: thread_usage(pid) for label, pid in roles.items()}
            t1 = mono()
            # The writer's last second, and Snapcast's buffer, still to be heard.
            time.sleep(max(0, began / 1e9 + total + 1 + 2.5 - mono() / 1e9))
        finally:
            stop_all(pids)
            if loss:
                sh(TESTBED, "loss", self.lan, "3", "0", check=False)
        span = (t1 - t0) / 1e9
        figures = {"folder": folder, "cpu": {}, "threads": {}}
        for label in roles:
            before, after = cpu0[label], cpu1[label]
            figures["cpu"][label] = 100 * sum(after[n][0] - before.get(n, (0, 0))[0] for n in after) / span
            figures["threads"][label] = {n: 100 * (after[n][0] - before.get(n, (0, 0))[0]) / span for n in after}
        if net0 and net1:
            figures["bytes"] = (net1[0] - net0[0]) / span
            figures["packets"] = (net1[1] - net0[1]) / span
        written = written_clicks(f"{folder}/writer.log")
        window = (t0, t1)
        heard, recordings = {}, {}
        inside = [i for i, w in written.items() if t0 <= w <= t1]
        for host in audio_hosts:
            try:
                times, audio, start = heard_clicks(f"{folder}/h{host}")
            except (OSError, ValueError) as error:
                figures[f"h{host}"] = {"error": str(error)}
                continue
            matched, mode = match(written, times, window)
            heard[host] = matched
            recordings[host] = (audio, start)
            delays = [matched[i] - written[i] for i in matched]
            figures[f"h{host}"] = {"delays": delays, "expected": len(inside)}
            if VERBOSE:
                print(f"    {system} h{host}: " + " ".join(f"{d / 1e6:.1f}" for d in delays))
        # Gaps over the measured clicks as heard: from the first to the last click written inside
        # the window, each at the delay heard on the hosts that heard it (so that a host that heard
        # almost nothing is measured over the same stretch).
        delays = sorted(d for host in heard for d in figures[f"h{host}"]["delays"])
        if delays and inside:
            delay = delays[len(delays) // 2]
            first, last = written[min(inside)] + delay, written[max(inside)] + delay
            for host, (audio, start) in recordings.items():
                found = gaps(audio, start, first, last)
                figures[f"h{host}"]["gaps"] = found
                figures[f"h{host}"]["span"] = (last - first) / 1e9
        if len(heard) == 2:
            a, b = heard[audio_hosts[0]], heard[audio_hosts[1]]
            figures["skew"] = [abs(a[i] - b[i]) for i in a if i in b]
        if system.startswith("partyradio"):
            figures["live_status"] = last_live_status(f"{folder}/listen3.log") if 3 in audio_hosts else None
        return figures


def net_dev(pid):
    """(tx bytes, tx packets) of eth0 in PID's network namespace."""
    try:
        with open(f"/proc/{pid}/net/dev") as handle:
            for line in handle:
                name, _, rest = line.partition(":")
                if name.strip() == "eth0":
                    fields = rest.split()
                    return int(fields[8]), int(fields[9])
    except FileNotFoundError:
        return None
    return None


def last_live_status(log):
    import json
    found = None
    try:
        with open(log) as handle:
            for line in handle:
                if '"live_status"' in line:
                    try:
                        found = json.loads(line)
                    except ValueError:
                        pass
    except FileNotFoundError:
        pass
    return found


def wait_for(log, text, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open(log) as handle:
                if text in handle.read():
                    return
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {text} in {log}")


def stop_all(pids):
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + 5
    for pid in pids:
        while os.path.exists(f"/proc/{pid}") and time.time() < deadline:
            time.sleep(0.05)
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


# ---------------------------------------------------------------------------------------------
# Printing.

LABELS = {"partyradio": "partyradio (default delay)", "snap1000": "Snapcast, buffer 1000 ms",
          "snap100": "Snapcast, buffer 100 ms (pulse:buffer_time=20)",
          "snap1000opus": "Snapcast, 1000 ms, Opus", "snap100opus": "Snapcast, 100 ms, Opus"}


def label(system):
    """What a system is called in the tables; `partyradioN` is partyradio at `dj --latency N`."""
    if system not in LABELS and system.startswith("partyradio"):
        return f"partyradio, dj --latency {system[len('partyradio'):]}"
    return LABELS[system]


def print_delay(system, f, skew=True):
    print(f"  {label(system)}")
    for host in AUDIO_HOSTS:
        h = f.get(f"h{host}")
        if not h or "error" in (h or {}):
            print(f"    host {host}: no recording ({(h or {}).get('error')})")
            continue
        d = h["delays"]
        if not d:
            print(f"    host {host}: no click heard of {h['expected']}")
            continue
        print(f"    host {host}: written -> heard  p50 {ms(d, .5):7.1f} ms  p95 {ms(d, .95):7.1f} ms  "
              f"[{min(d) / 1e6:.1f}, {max(d) / 1e6:.1f}]  {len(d)} of {h['expected']} clicks heard")
    if skew:
        s = f.get("skew") or []
        if s:
            print(f"    skew h2-h3       p50 {ms(s, .5):7.3f} ms  p99 {ms(s, .99):7.3f} ms  max {max(s) / 1e6:.3f} ms "
                  f"({len(s)} clicks)")
        else:
            print("    skew h2-h3       no click heard at both")


def print_cpu(system, f):
    for label, cpu in f["cpu"].items():
        threads = f["threads"][label]
        top = sorted(threads.items(), key=lambda kv: -kv[1])[:3]
        name = {"dj": "DJ", "snapserver": "snapserver", "h2": "host 2's listener", "h3": "host 3's listener"}[label]
        print(f"    CPU {name:18s} {cpu:5.2f} % of a core  (" + ", ".join(f"{n} {c:.2f} %" for n, c in top) + ")")


def root_in_root_namespace():
    """Rule one: installing snapserver must not have started it (or anything of Snapcast's) in the
    root network namespace; the bench refuses to run beside one."""
    root = os.readlink("/proc/1/ns/net") if os.access("/proc/1/ns/net", os.R_OK) else os.readlink("/proc/2/ns/net")
    for name in ("snapserver", "snapclient"):
        for pid in sh("pgrep", "-x", name, check=False).split():
            try:
                if os.readlink(f"/proc/{pid}/ns/net") == root:
                    sys.exit(f"bench-live: {name} (PID {pid}) runs in the root network namespace; stop it first")
            except FileNotFoundError:
                pass


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--write":
        return write(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    require_root()
    speaker.PACKAGES[:] = PACKAGES
    speaker.ensure_packages()
    root_in_root_namespace()
    try:
        import numpy  # noqa: F401
    except ImportError:
        os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__), *sys.argv[1:]])
    parts = sys.argv[1:] or ["delay", "clocks", "loss", "bytes"]
    work = tempfile.mkdtemp(prefix="partyradio-live-")
    os.chmod(work, 0o755)
    version = sh(BIN, "--version")
    snap = sh("/usr/bin/snapserver", "--version").splitlines()[0]
    print(f"live vs Snapcast: partyradio {version} ({BIN}), {snap}; WARMUP {WARMUP:.0f} s, MEASURE {MEASURE:.0f} s, "
          f"LOSS_SECONDS {LOSS_SECONDS:.0f} s, BYTES_SECONDS {BYTES_SECONDS:.0f} s; "
          f"DJ_ARGS {' '.join(DJ_ARGS) or '(none)'}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    help_text = sh(BIN, "dj", "--help", check=False)
    if "--latency " not in help_text and "--latency <" not in help_text:
        print("  partyradio `dj --latency`: no such option in this build: only the default delay (60 ms) is measured")
    bench = Bench(work)
    turn = 0

    def order(systems):
        nonlocal turn
        turn += 1
        return systems if turn % 2 else list(reversed(systems))

    try:
        for part in parts:
            if part in ("delay", "clocks"):
                clocks = part == "clocks"
                print(f"\n{part}: a click written into the source -> heard at hosts 2 and 3, {MEASURE:.0f} s; clocks "
                      + ("wrong: server +350 ms, listeners +2 s +200 ppm and -2 s -200 ppm" if clocks else "right"))
                results = {s: bench.run(s, MEASURE, clocks=clocks) for s in order(SYSTEMS)}
                for system in SYSTEMS:
                    print_delay(system, results[system])
                    print_cpu(system, results[system])
            elif part == "loss":
                for pct in (10, 25):
                    print(f"\nloss {pct} %: host 3 drops {pct} % of what comes in, at random; {LOSS_SECONDS:.0f} s")
                    results = {s: bench.run(s, LOSS_SECONDS, loss=pct) for s in order(SYSTEMS)}
                    for system in SYSTEMS:
                        f = results[system]
                        print_delay(system, f, skew=False)
                        h = f.get("h3") or {}
                        g = h.get("gaps")
                        if g is None:
                            print("    host 3: gaps not measured (no stream heard)")
                        else:
                            longest = max((x[1] for x in g), default=0)
                            span = h["span"]
                            print(f"    host 3: {len(g)} gaps >= 10 ms in {span:.1f} s "
                                  f"({len(g) * 60 / span:.1f} a minute), longest {longest:.1f} ms, "
                                  f"together {sum(x[1] for x in g):.0f} ms ({100 * sum(x[1] for x in g) / 1e3 / span:.1f} %)")
                        host2 = (f.get("h2") or {}).get("gaps")
                        if host2 is not None:
                            print(f"    host 2 (no loss): {len(host2)} gaps >= 10 ms")
                        status = f.get("live_status")
                        if status:
                            keys = ("received", "played", "recovered", "concealed", "late", "underruns",
                                    "undecodable_blocks", "placements")
                            print("    host 3 live_status: " + ", ".join(f"{k} {status.get(k)}" for k in keys))
            elif part == "bytes":
                print(f"\nbytes: what host 1 sends (eth0 tx, Ethernet frames), {BYTES_SECONDS:.0f} s after "
                      f"{BYTES_WARMUP:.0f} s; Opus at 128 kbit/s "
                      f"is {OPUS_BYTES_PER_S / 1000:.0f} kB/s. Listeners: host 2 plays (and host 3 from 5 on); the rest "
                      "are light (`listen --no-audio`, `snapclient --player file:filename=null`) on hosts 4-6")
                systems = [s for s in SYSTEMS if not s.startswith("snap") or snap_buffer(s) != 100]
                for count in (1, 5, 20):
                    hosts = AUDIO_HOSTS[:1] if count == 1 else AUDIO_HOSTS
                    results = {s: bench.run(s, BYTES_SECONDS, light=count - len(hosts), audio_hosts=hosts,
                                            warmup=BYTES_WARMUP) for s in order(systems)}
                    for system in systems:
                        f = results[system]
                        if "bytes" in f:
                            print(f"  {count:2d} listeners  {label(system):28s} {f['bytes'] / 1000:8.1f} kB/s  "
                                  f"{f['packets']:7.1f} packets/s  {f['bytes'] / OPUS_BYTES_PER_S:5.2f} x the Opus bitrate")
                        else:
                            print(f"  {count:2d} listeners  {label(system):28s} not measured")
            else:
                sys.exit(f"bench-live: unknown part {part!r} (delay, clocks, loss, bytes)")
    finally:
        bench.close()
        print(f"\nload at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        keep_or_remove(work)


if __name__ == "__main__":
    main()
