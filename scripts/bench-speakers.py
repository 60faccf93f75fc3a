#!/usr/bin/env python3
"""Speakers (issue 29, docs/SPEAKERS.md): what the DJ's controls do at the sound card (needs root):
`scripts/bench speakers`.

One testbed, every process on its hosts (rule one: the DJ, the speakers, avahi, PulseAudio and the
recorders all run inside the testbed's namespaces, never in the root one):

  host 1      the DJ of a live station (`dj --live pipe:FIFO --no-audio`; with STATION=file, of a
              file station, `dj --library DIR --no-audio`, and no writer) and the writer that feeds
              its FIFO in real time: a steady 440 Hz tone at 8,000 with a 5 ms full-scale click at
              irregular intervals (400-700 ms, seeded; the writer notes when it wrote each click),
              and the poster, which sets speakers as the DJ's page does (POST /api/dj with the DJ
              token from dj-link.json) or runs `partyradio speaker-set` there, and notes on
              CLOCK_MONOTONIC when it did;
  hosts 2-5   the speakers (`partyradio speaker --audio-driver pulse`), round-robin; each one that
              plays does so into a null sink of its own (PULSE_SINK) of its host's PulseAudio,
              recorded from the sink's monitor (parec; each read stamped with CLOCK_MONOTONIC, the
              one clock all namespaces share; bench-speaker.py's sample_clock turns the stamps into
              the sink's timeline);
              speaker 1's sink has a second recorder, whose difference from the first is the
              harness's own floor.

STATION=live (the default): a live station, whose tone is steady for as long as the run (the demo
library's tracks end and change every few seconds), and whose written clicks give each speaker's
delay to the sample.

STATION=file: a file station, whose speakers play through libmpv (the volume is mpv's, the trim
moves mpv's sync target). The bench makes its library first: 2 WAV tracks (48 kHz s16 stereo) of
TRACK_SECONDS each (default 720, longer than a whole run, so no track ends in a part), of the same
signal as the writer's (each track's clicks drawn from a seed of its own); the DJ is `dj --library
DIR --no-audio` and there is no writer. Without one, no click has a "written" instant: speaker 1's
own clicks stand in for the writer's (each one SHIFT = 1 s earlier, and every recording matched to
them by the most common delay, as to written clicks), so every figure is relative, which is all
the parts measure: volume is from the POST to the level at the sink as for a live station; trim is
speaker 2's clicks against speaker 1's; gone's skew and many's are pairwise. Every part makes sense
for a file station; none is left out. (The first click of a restarted speaker 2 is against speaker
1's, as in live mode.)

The parts, in this order on the same testbed (default: all):
  volume  the DJ sets speaker 1's volume 20, 100, 20, ... (ROUNDS, default 40, 0.6-1.2 s apart):
          from the POST sent (or `speaker-set` started) to the level at its sink crossing the
          geometric mean of the two levels (RMS over 5 ms windows stepped by 0.5 ms; at volume 20
          the live gain is 0.2^3, as libmpv's for a file station, the tone's RMS goes from about
          5,700 to about 45). Then 10 rounds with `partyradio speaker-set` started on host 1 (its
          own start-up included).
  trim    `speaker-set 2 delay 180` through the API: speaker 2's clicks against speaker 1's, over
          TRIM_SECONDS before and after (the first 3 s after the change left out), then back to 0.
  gone    KILLS rounds (default 10): kill -9 of speaker 2 -> the DJ's `--json-events` `speakers`
          event without it (the event's time_ns); then speaker 2 started again -> its `tuned_in`,
          -> its first sound at its sink, and its clicks' skew against speaker 1's in the first
          2 s of sound and the 3 s after.
  many    SPEAKERS (default 20) speakers on one station: PLAYING of them (default 4) play, each
          into a null sink of its own, recorded; the rest run `--no-audio` (they tune in, send
          their status and heartbeats and take controls as any speaker, and play nothing: a
          speaker playing a live station costs about 7 % of a core, too much twenty times over on
          a 2-core machine beside their sound servers and recorders; at 8 the machine's load
          alone moved them by several ms). The skew of every recorded pair on every click over
          MEASURE s (p50/p99/max of |skew|), and the DJ's CPU over the same seconds against its CPU
          without speakers, before they were started and after they stopped (CPU_SECONDS each,
          default 20), with its busiest threads and how many `speakers` events it printed
          meanwhile (its list changes when a speaker's sync error moves by 1 ms or more). Then
          the DJ's CPU with SPEAKERS bare members of the station's groups in the speakers' places
          (a socket each that joins both families' groups and discards what comes): every testbed
          host is a namespace on this machine, so the kernel delivers the DJ's group datagrams to
          the speakers' sockets inside the DJ's own sendto; a DJ on a real network hands one copy
          to its card. The speakers' figure less the members' is what the DJ itself spends on them.

Usage: scripts/bench-speakers.py [volume] [trim] [gone] [many]   (default: all four)
Environment: PARTYRADIO_BIN; STATION (live, the default, or file); TRACK_SECONDS (file: each
track's length, default 720); ROUNDS (default 40), KILLS (default 10), SPEAKERS (default 20),
PLAYING (default 4, at least 2), MEASURE (s, default 30), CPU_SECONDS (default 20), TRIM_SECONDS
(default 15), FLOOR=0 leaves speaker 1's second recorder out, KEEP=1 keeps the recordings and
logs, VERBOSE=1 prints every round, TRACE=1 has the
DJ and every speaker write `--trace` (20 lines a second: their station-clock estimate against the
real clock) into the kept folder, and prints each recorded speaker's clock error; TIMELINE=line
times the recordings on one fitted line each (bench-speaker.py's Timeline; default: followed in
SLICE_S slices), COMPARE_TIMELINE=1 prints trim, gone and many both ways.
"""
import json, os, random, signal, subprocess, sys, tempfile, time, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import BIN, TESTBED, keep_or_remove, load_script, null_sink, percentile, require_root, sh, spawn, testbed_down, testbed_up, thread_usage

speaker_bench = load_script("bench-speaker.py")  # sample_clock, ensure_packages
live_bench = load_script("bench-live.py")  # heard_clicks, match, stop_all

ROUNDS = int(os.environ.get("ROUNDS", "40"))
KILLS = int(os.environ.get("KILLS", "10"))
SPEAKERS = max(2, int(os.environ.get("SPEAKERS", "20")))
PLAYING = max(2, min(SPEAKERS, int(os.environ.get("PLAYING", "4"))))
MEASURE = float(os.environ.get("MEASURE", "30"))
CPU_SECONDS = float(os.environ.get("CPU_SECONDS", "20"))
TRIM_SECONDS = float(os.environ.get("TRIM_SECONDS", "15"))
VERBOSE = os.environ.get("VERBOSE") == "1"
TRACE = os.environ.get("TRACE") == "1"
FLOOR = os.environ.get("FLOOR", "1") != "0"
STATION = os.environ.get("STATION", "live")
TRACKS = 2
TRACK_SECONDS = float(os.environ.get("TRACK_SECONDS", "720"))
SHIFT = 1_000_000_000  # a file station's stand-in for the writer's log: speaker 1's clicks this much earlier
RATE, CHUNK = 48000, 480
TONE, CLICK = 8000, 30000
SEED = 20261207
NAME = "Speakers bench"
SPEAKER_HOSTS = [2, 3, 4, 5]
PER_HOST = (PLAYING + len(SPEAKER_HOSTS) - 1) // len(SPEAKER_HOSTS)  # sinks a host
TRIM_MS = 180
PACKAGES = ["pulseaudio", "pulseaudio-utils", "python3-numpy"]


def mono():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


# ---------------------------------------------------------------------------------------------
# Helpers that run on testbed hosts (this file started again with a --flag).

def signal_chunks(seed):
    """The bench's signal in 10 ms chunks, forever: (s16le stereo bytes, whether a click starts the
    chunk). A steady 440 Hz tone at 8,000; from 0.5 s on a 5 ms full-scale click every 400-700 ms
    (the gaps drawn from `seed`). The live writer sends it in real time; a file station's tracks
    are made of it."""
    import numpy as np
    rng = random.Random(seed)
    next_click = int(0.5 * RATE) // CHUNK
    burst = np.where((np.arange(240) // 24) % 2 == 0, CLICK, -CLICK)
    n = 0
    while True:
        t = np.arange(n * CHUNK, (n + 1) * CHUNK)
        samples = (TONE * np.sin(2 * np.pi * 440 * t / RATE)).astype(np.int32)
        clicked = n == next_click
        if clicked:
            samples[:240] = burst
            next_click += rng.randrange(40, 71)
        yield np.repeat(samples.astype("<i2"), 2).tobytes(), clicked
        n += 1


def write(path, log):
    """`--write FIFO LOG`: the signal in 10 ms chunks at their real-time instants, until killed;
    LOG gets "click INDEX NS" (CLOCK_MONOTONIC just before the chunk that starts it)."""
    with open(path, "wb", buffering=0) as pipe, open(log, "w", buffering=1) as out:
        begin = mono()
        index = 0
        for n, (data, clicked) in enumerate(signal_chunks(SEED)):
            due = begin + n * CHUNK * 1_000_000_000 // RATE
            wait = due - mono()
            if wait > 0:
                time.sleep(wait / 1e9)
            now = mono()
            pipe.write(data)
            if clicked:
                out.write(f"click {index} {now}\n")
                index += 1


def make_library(folder):
    """A file station's library: TRACKS WAV files (48 kHz s16 stereo) of TRACK_SECONDS each, the
    signal with clicks drawn from a seed of each track's own."""
    import itertools
    import wave
    os.makedirs(folder)
    for k in range(1, TRACKS + 1):
        with wave.open(f"{folder}/{k:02d} Tone with clicks {k}.wav", "wb") as track:
            track.setnchannels(2)
            track.setsampwidth(2)
            track.setframerate(RATE)
            chunks = itertools.islice(signal_chunks(SEED + k), int(TRACK_SECONDS * RATE) // CHUNK)
            track.writeframes(b"".join(data for data, _ in chunks))


def poster(fifo, state, log):
    """`--poster FIFO DJSTATE LOG`: for each line of FIFO, `api ARG` (POST /api/dj command=speaker
    arg=ARG with the token of DJSTATE/dj-link.json, as the DJ's page does) or `cli ARG...`
    (`partyradio speaker-set ARG... --state-dir DJSTATE`); LOG gets "SENT_NS DONE_NS OK ANSWER"."""
    import http.client
    link = json.load(open(os.path.join(state, "dj-link.json")))
    origin = urllib.parse.urlsplit(link["origin"])
    with open(fifo) as commands, open(log, "w", buffering=1) as out:
        for line in iter(commands.readline, ""):
            kind, _, arg = line.strip().partition(" ")
            if kind == "api":
                body = urllib.parse.urlencode({"command": "speaker", "arg": arg})
                # A connection of its own each time (the DJ closes an idle one), its connect included.
                sent = mono()
                connection = http.client.HTTPConnection(origin.hostname, origin.port, timeout=10)
                try:
                    connection.request("POST", "/api/dj", body, {
                        "X-DJ-Token": link["token"], "Origin": link["origin"],  # the page's own, as a browser sends
                        "Content-Type": "application/x-www-form-urlencoded"})
                    answer = connection.getresponse().read().decode()
                except (OSError, http.client.HTTPException) as error:
                    answer = f"error {error}"
                finally:
                    connection.close()
                done = mono()
                ok = '"ok":true' in answer.replace(" ", "")
            else:
                sent = mono()
                result = subprocess.run([BIN, "speaker-set", *arg.split(), "--state-dir", state],
                                        capture_output=True, text=True)
                done = mono()
                ok, answer = result.returncode == 0, (result.stdout + result.stderr).strip()
            out.write(f"{sent} {done} {int(ok)} {answer.replace(chr(10), ' ')}\n")


# ---------------------------------------------------------------------------------------------
# The testbed, its sound servers and its nodes.

class Lab:
    def __init__(self, work):
        self.work = work
        self.pids = []
        self.speakers = {}  # number -> PID
        self.recorded = set()
        # (speaker 1's, speaker 2's) sinks' configured latency after each restart of speaker 2 (gone).
        self.sink_blocks = []
        self.real_minus_mono = time.clock_gettime_ns(time.CLOCK_REALTIME) - mono()
        self.lan = testbed_up(1 + len(SPEAKER_HOSTS), "--tag", "bench-speakers")
        try:
            self.set_up()
        except BaseException:  # a testbed half set up is taken down all the same
            self.close()
            raise

    def set_up(self):
        """A PulseAudio on every speaker host, the DJ, its writer and the poster on host 1."""
        work = self.work
        for host in SPEAKER_HOSTS:
            home = f"{work}/pa{host}"
            os.makedirs(home)
            sinks = [arg for k in range(1, PER_HOST + 1) for arg in
                     ("-L", null_sink(f"party{k}", RATE))]
            self.pids.append(spawn(self.lan, host, f"{home}.log", "/usr/bin/env", f"HOME={home}",
                                   f"XDG_RUNTIME_DIR={home}", "/usr/bin/pulseaudio", "-n", "--daemonize=no",
                                   "--exit-idle-time=-1", "--use-pid-file=no", "--disallow-exit",
                                   "--log-target=stderr", *sinks, "-L",
                                   f"module-native-protocol-unix socket={home}/native auth-anonymous=1"))
        deadline = time.time() + 15
        for host in SPEAKER_HOSTS:
            while not os.path.exists(f"{work}/pa{host}/native"):
                if time.time() > deadline:
                    raise RuntimeError(f"PulseAudio on host {host} did not start: {work}/pa{host}.log")
                time.sleep(0.05)
        self.dj_log = f"{work}/dj.log"
        self.dj_state = f"{work}/dj"
        if STATION == "file":
            source = ["--library", f"{work}/library"]
        else:
            fifo = f"{work}/fifo"
            os.mkfifo(fifo, 0o666)
            source = ["--live", f"pipe:{fifo}?sampleformat=48000:16:2"]
        trace = ["--trace", f"{work}/trace-dj.jsonl"] if TRACE else []
        self.dj = spawn(self.lan, 1, self.dj_log, BIN, "dj", "--name", NAME, *source, "--json-events", "--fresh",
                        "--no-audio", "--state-dir", self.dj_state, *trace)
        self.pids.append(self.dj)
        live_bench.wait_for(self.dj_log, '"station_published"', 30)
        if STATION == "live":
            self.pids.append(spawn(self.lan, 1, f"{work}/writer.out", "/usr/bin/python3", os.path.abspath(__file__),
                                   "--write", fifo, f"{work}/writer.log"))
        deadline = time.time() + 15
        while not os.path.exists(f"{self.dj_state}/dj-link.json"):
            if time.time() > deadline:
                raise RuntimeError("the DJ wrote no dj-link.json")
            time.sleep(0.05)
        commands = f"{work}/commands"
        os.mkfifo(commands, 0o600)
        self.post_log = f"{work}/poster.log"
        open(self.post_log, "w").close()
        self.pids.append(spawn(self.lan, 1, f"{work}/poster.out", "/usr/bin/python3", os.path.abspath(__file__),
                               "--poster", commands, self.dj_state, self.post_log))
        # Read-write, so that opening it does not wait for the poster (nor hang if it failed).
        self.commands = os.fdopen(os.open(commands, os.O_RDWR), "w", buffering=1)

    def close(self):
        try:
            self.commands.close()
        except (AttributeError, OSError):
            pass
        live_bench.stop_all(list(self.speakers.values()) + self.pids)
        testbed_down(self.lan)

    @staticmethod
    def place(number):
        """Speaker NUMBER's host and sink: round-robin over the hosts, then the next sink."""
        return SPEAKER_HOSTS[(number - 1) % len(SPEAKER_HOSTS)], f"party{(number - 1) // len(SPEAKER_HOSTS) + 1}"

    def start_speaker(self, number):
        """Speaker NUMBER (`SpkNUMBER`, in room `Room1`-`Room4`): one of the first PLAYING into its
        own sink, recorded; a later one `--no-audio`. Returns when it was started."""
        host, sink = self.place(number)
        server = f"unix:{self.work}/pa{host}/native"
        plays = number <= PLAYING
        if plays and number not in self.recorded:
            self.recorded.add(number)
            # Speaker 1's sink gets a second recorder: the two on one sink are the harness's floor.
            for suffix in ("", "b") if number == 1 and FLOOR else ("",):
                self.pids.append(spawn(self.lan, host, f"{self.work}/rec{number}{suffix}.log", "/usr/bin/python3",
                                       os.path.abspath(__file__), "--record", server, sink,
                                       f"{self.work}/s{number}{suffix}"))
        started = mono()
        self.speakers[number] = spawn(
            self.lan, host, f"{self.work}/speaker{number}.log", BIN, "speaker", "--name", f"Spk{number}", "--room",
            f"Room{(number - 1) % 4 + 1}", "--station", NAME, "--json-events", "--audio-driver", "pulse",
            "--state-dir", f"{self.work}/state{number}", *([] if plays else ["--no-audio"]),
            *(["--trace", f"{self.work}/trace{number}.jsonl"] if TRACE else []),
            env=dict(os.environ, PULSE_SERVER=server, PULSE_SINK=sink))
        return started

    def sink_latency_us(self, number):
        """Speaker NUMBER's sink's configured latency (`pactl list sinks`), in us: its null sink renders
        in blocks of it, and its monitor hands each block out that much before it plays. None if unread."""
        host, sink = self.place(number)
        text = sh(TESTBED, "run", self.lan, str(host), "pactl", "-s", f"unix:{self.work}/pa{host}/native",
                  "list", "sinks", check=False)
        for block in text.split("\n\n"):
            if f"Name: {sink}\n" in block + "\n":
                for line in block.splitlines():
                    if "Latency:" in line and "configured" in line:
                        return int(line.split("configured")[1].split()[0])
        return None

    def send(self, line, timeout=10):
        """A line to the poster; returns (sent ns, done ns, ok, answer) once it has done it."""
        before = line_count(self.post_log)
        self.commands.write(line + "\n")
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(self.post_log) as handle:
                lines = handle.read().splitlines()
            if len(lines) > before:
                sent, done, ok, *answer = lines[before].split(" ")
                return int(sent), int(done), ok == "1", " ".join(answer)
            time.sleep(0.005)
        raise RuntimeError(f"the poster did not do {line!r}: {self.work}/poster.out")

    def listed(self, start=0):
        """The DJ's `speakers` events from line `start` on: [(time_ns on CLOCK_MONOTONIC, {name: entry})]."""
        out = []
        for event in events(self.dj_log, start):
            if event.get("event") == "speakers":
                out.append((event["time_ns"] - self.real_minus_mono,
                            {entry["name"]: entry for entry in event.get("speakers", [])}))
        return out

    def wait_listed(self, predicate, start=0, timeout=30):
        """The time of the first `speakers` event from line `start` on that `predicate` accepts (the
        event's own time_ns: how often this looks does not change it)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            for at, speakers in self.listed(start):
                if predicate(speakers):
                    return at
            time.sleep(0.05)
        raise RuntimeError(f"timed out waiting for the DJ's speakers list in {self.dj_log}")

    def playing(self, names, start=0, timeout=30):
        return self.wait_listed(lambda s: all(s.get(n, {}).get("playing") for n in names), start, timeout)


def line_count(path):
    try:
        with open(path) as handle:
            return sum(1 for _ in handle)
    except FileNotFoundError:
        return 0


def events(path, start=0):
    out = []
    try:
        with open(path) as handle:
            for i, line in enumerate(handle):
                if i >= start and line.startswith("{"):
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
    except FileNotFoundError:
        pass
    return out


# ---------------------------------------------------------------------------------------------
# The analysis.

class Recording:
    """A sink's recording: its samples (float, full scale 1) and when sample 0 reached the monitor."""

    def __init__(self, base):
        import numpy as np
        self.base = base
        self.audio = np.fromfile(base + ".raw", dtype="<i2")
        self.timeline = speaker_bench.Timeline(base + ".times")

    def index(self, ns):
        return int(self.timeline.index(ns))

    def at(self, index):
        return self.timeline.at(index)

    def level_change(self, from_ns, target, threshold, within=2.0):
        """When the level crosses `threshold` after from_ns: the start of the first 5 ms window under
        it (target "down") or the end of the first one over it ("up"); None if not within `within` s."""
        import numpy as np
        a = max(0, self.index(from_ns) - 240)
        b = min(len(self.audio), a + int(within * RATE))
        x = self.audio[a:b].astype(np.float64)
        if len(x) < 480:
            return None
        cs = np.concatenate([[0.0], np.cumsum(x * x)])
        starts = np.arange(0, len(x) - 240, 24)
        rms = np.sqrt((cs[starts + 240] - cs[starts]) / 240)
        hits = np.nonzero(rms < threshold if target == "down" else rms > threshold)[0]
        if len(hits) == 0:
            return None
        first = starts[hits[0]] + (0 if target == "down" else 240)
        return self.at(a + first)

    def first_sound(self, from_ns, within=10.0):
        """The first sample louder than a quarter of the tone after from_ns."""
        import numpy as np
        a = max(0, self.index(from_ns))
        loud = np.nonzero(np.abs(self.audio[a:a + int(within * RATE)].astype(np.int32)) > TONE / 4)[0]
        return None if len(loud) == 0 else self.at(a + loud[0])


def written_clicks(path):
    return live_bench.written_clicks(path)


_HEARD = {}


def heard(rec_base):
    """The clicks heard in a recording (bench-live.py's detection: the first sample at twice the tone)."""
    if rec_base not in _HEARD:
        _HEARD[rec_base] = live_bench.heard_clicks(rec_base)[0]
    return _HEARD[rec_base]


def reference_clicks(rec_base):
    """A file station's stand-in for the writer's log (no process writes its clicks): {index: ns} of
    the clicks heard in speaker 1's recording, SHIFT earlier. Every other recording is matched
    against them as against written clicks, so each one's "delay" is SHIFT plus its offset to
    speaker 1 (the offsets of one recording to another are all the parts use); speaker 1's own
    is SHIFT exactly. The gaps between clicks are irregular (400-700 ms), so the most common delay
    pairs each click with its own and not a neighbour."""
    return {i: int(h - SHIFT) for i, h in enumerate(heard(rec_base))}


def clicks(rec_base, written, window):
    """{click index: heard ns} of the clicks written inside `window` (ns, ns) heard in the recording,
    matched by the most common delay (bench-live.py's `match`)."""
    inside = {i: w for i, w in written.items() if window[0] <= w <= window[1]}
    near = [h for h in heard(rec_base) if window[0] <= h <= window[1] + 3e9]
    matched, _ = live_bench.match(inside, near, window)
    return matched


def ms_summary(values, digits=1):
    if not values:
        return "no samples"
    f = f"{{:.{digits}f}}"
    return (f"p50 {f.format(percentile(values, .5))} ms  p99 {f.format(percentile(values, .99))} ms  "
            f"max {f.format(max(values))} ms  (n={len(values)})")


# ---------------------------------------------------------------------------------------------
# The parts.

def part_volume(lab, marks):
    """40 rounds through the API, then 10 with speaker-set: (sent ns, target) in marks["volume"]."""
    rounds = []
    lab.send("api Spk1 volume 100")
    time.sleep(1)
    level = 100
    for kind, count in (("api", ROUNDS), ("cli", 10)):
        for _ in range(count):
            level = 20 if level == 100 else 100
            sent, done, ok, answer = lab.send(f"{kind} Spk1 volume {level}")
            rounds.append((kind, sent, done, ok, level, answer))
            time.sleep(random.uniform(0.6, 1.2))
    lab.send("api Spk1 volume 100")
    marks["volume"] = rounds


def part_trim(lab, marks):
    """Speaker 2's clicks against speaker 1's before and after a +180 ms trim."""
    before = (mono(), mono() + TRIM_SECONDS * 1e9)
    time.sleep(TRIM_SECONDS + 0.5)
    sent, _, ok, answer = lab.send(f"api Spk2 delay {TRIM_MS}")
    time.sleep(3)
    after = (mono(), mono() + TRIM_SECONDS * 1e9)
    time.sleep(TRIM_SECONDS + 0.5)
    _, _, back, answer_back = lab.send("api Spk2 delay 0")
    if not back:
        raise RuntimeError(f"the trim could not be set back to 0: {answer_back}")
    time.sleep(3)
    marks["trim"] = (before, after, ok, answer)


def part_gone(lab, marks):
    """KILLS rounds: kill -9 speaker 2, its going from the DJ's list; started again, its sound."""
    rounds = []
    for _ in range(KILLS):
        mark = line_count(lab.dj_log)
        killed = mono()
        os.kill(lab.speakers[2], signal.SIGKILL)
        try:
            gone = lab.wait_listed(lambda s: "Spk2" not in s, mark, timeout=20)
        except RuntimeError:
            gone = None
        time.sleep(random.uniform(0.5, 1.5))
        log = f"{lab.work}/speaker2.log"
        speaker_mark = line_count(log)
        started = lab.start_speaker(2)
        tuned = None
        deadline = time.time() + 20
        while tuned is None and time.time() < deadline:
            for event in events(log, speaker_mark):
                if event.get("event") == "tuned_in":
                    tuned = event["time_ns"] - lab.real_minus_mono
                    break
            time.sleep(0.01)
        time.sleep(6)  # its first 5 s of sound, to measure its skew in
        rounds.append((killed, gone, started, tuned))
        lab.sink_blocks.append((lab.sink_latency_us(1), lab.sink_latency_us(2)))
        if VERBOSE:
            print(f"    gone {((gone or 0) - killed) / 1e6:.0f} ms, tuned in {((tuned or 0) - started) / 1e6:.0f} ms")
    marks["gone"] = rounds


def member(group, port):
    """A bare member of the station's groups (`--member 239.255.C.D PORT`) on every interface of
    its namespace but the loopback, as a speaker joins them: reads and discards until killed."""
    import select, socket, struct
    interfaces = [(index, name) for index, name in socket.if_nameindex() if name != "lo"]
    v4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    v4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    v4.bind((group, port))
    for index, _ in interfaces:
        v4.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                      socket.inet_aton(group) + struct.pack("=4si", b"\0" * 4, index))
    sockets = [v4]
    c, d = (int(x) for x in group.split(".")[2:])
    try:
        v6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        v6.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        v6.bind(("", port))
        for index, _ in interfaces:
            v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                          socket.inet_pton(socket.AF_INET6, f"ff12::5052:{c << 8 | d:x}") + struct.pack("=I", index))
        sockets.append(v6)
    except OSError:
        pass  # no IPv6 in this namespace: the DJ sends it no IPv6 copy either
    while True:
        for ready in select.select(sockets, [], [])[0]:
            ready.recv(65536)


def station_group(lab):
    """The DJ's group and port, from its `station_started` event."""
    for event in events(lab.dj_log):
        if event.get("event") == "station_started":
            address, port = event["group"].rsplit(":", 1)
            return address, int(port)
    raise RuntimeError(f"no station_started in {lab.dj_log}")


def dj_cpu(lab, seconds):
    """The DJ's CPU (% of a core) over `seconds`, in all and by thread name."""
    before, t0 = thread_usage(lab.dj), mono()
    time.sleep(seconds)
    after, t1 = thread_usage(lab.dj), mono()
    span = (t1 - t0) / 1e9
    threads = {name: 100 * (after[name][0] - before.get(name, (0, 0))[0]) / span for name in after}
    return sum(threads.values()), threads


def part_many(lab, marks):
    """SPEAKERS speakers, PLAYING of them recorded: the skew of every recorded pair, and the DJ's CPU."""
    for number in range(1, SPEAKERS + 1):
        if number not in lab.speakers:
            lab.start_speaker(number)
            time.sleep(0.2)
    lab.playing([f"Spk{n}" for n in range(1, PLAYING + 1)], timeout=60)
    lab.wait_listed(lambda s: all(f"Spk{n}" in s for n in range(1, SPEAKERS + 1)), timeout=60)
    time.sleep(10)
    window = (mono(), mono() + MEASURE * 1e9)
    cpu, threads = dj_cpu(lab, MEASURE)
    load = os.getloadavg()
    time.sleep(3)
    final = lab.listed()[-1][1] if lab.listed() else {}
    # The DJ without speakers again (they say goodbye on SIGTERM), so that a load that came or
    # went on the machine meanwhile shows as a difference between the two baselines.
    live_bench.stop_all(list(lab.speakers.values()))
    lab.speakers.clear()
    time.sleep(5)
    after = dj_cpu(lab, CPU_SECONDS)
    group, port = station_group(lab)
    members = [spawn(lab.lan, lab.place(number)[0], f"{lab.work}/member{number}.log", "/usr/bin/python3",
                     os.path.abspath(__file__), "--member", group, str(port)) for number in range(1, SPEAKERS + 1)]
    time.sleep(5)
    bare = dj_cpu(lab, CPU_SECONDS)
    live_bench.stop_all(members)
    marks["many"] = (window, cpu, threads, load, final, after, bare)


# ---------------------------------------------------------------------------------------------
# Printing.

def print_volume(lab, rounds):
    rec = Recording(f"{lab.work}/s1")
    loud, quiet = TONE / 2 ** 0.5, TONE / 2 ** 0.5 * 0.2 ** 3
    threshold = (loud * quiet) ** 0.5
    print(f"\nvolume: speaker 1's volume 100 <-> 20, the tone's RMS at its sink about {loud:.0f} <-> {quiet:.0f}; "
          f"a change is where the 5 ms RMS crosses {threshold:.0f}")
    for kind, label in (("api", "POST /api/dj (as the DJ's page) -> level changed at the sink"),
                        ("cli", "`speaker-set` started on host 1 -> level changed at the sink")):
        delays, answers, missed = [], [], 0
        for k, sent, done, ok, level, answer in rounds:
            if k != kind:
                continue
            answers.append((done - sent) / 1e6)
            at = rec.level_change(sent, "down" if level == 20 else "up", threshold)
            if at is None or not ok:
                missed += 1
                if VERBOSE or not ok:
                    print(f"    {kind} volume {level}: no change heard ({answer})")
                continue
            delays.append((at - sent) / 1e6)
            if VERBOSE:
                print(f"    {kind} volume {level:3d}: {delays[-1]:6.1f} ms")
        print(f"  {label}:")
        print(f"    {ms_summary(delays)}" + (f"  ({missed} rounds without a change heard)" if missed else ""))
        print(f"    its answer came back after: {ms_summary(answers)}")


def print_trim(lab, written, trim):
    before, after, ok, answer = trim
    print(f"\ntrim: `Spk2 delay {TRIM_MS}` through the API ({'ok' if ok else answer}); speaker 2's clicks minus "
          f"speaker 1's, {TRIM_SECONDS:.0f} s before and {TRIM_SECONDS:.0f} s after (3 s after the change left out)")
    offsets = {}
    for label, window in (("before", before), ("after", after)):
        a = clicks(f"{lab.work}/s1", written, window)
        b = clicks(f"{lab.work}/s2", written, window)
        offsets[label] = [(b[i] - a[i]) / 1e6 for i in a if i in b]
        o = offsets[label]
        if o:
            print(f"  {label:6s}  offset p50 {percentile(o, .5):+8.3f} ms  [{min(o):+8.3f}, {max(o):+8.3f}]  "
                  f"({len(o)} clicks)")
        else:
            print(f"  {label:6s}  no clicks heard at both")
    if offsets["before"] and offsets["after"]:
        moved = percentile(offsets["after"], .5) - percentile(offsets["before"], .5)
        base = percentile(offsets["before"], .5)
        errors = [abs(o - base - TRIM_MS) for o in offsets["after"]]
        print(f"  moved by {moved:+.3f} ms (goal {TRIM_MS} +- 0.5 ms); each click after against before's median "
              f"+ {TRIM_MS}: |error| {ms_summary(errors, 3)}")


def print_gone(lab, written, rounds):
    print(f"\ngone: kill -9 of speaker 2, {len(rounds)} rounds; started again 0.5-1.5 s after it was shown gone")
    gone = [(g - k) / 1e6 for k, g, _, _ in rounds if g]
    print(f"  kill -9 -> gone from the DJ's `speakers` event: {ms_summary(gone)}"
          + (f"  ({len(rounds) - len(gone)} never shown gone within 20 s)" if len(gone) < len(rounds) else ""))
    rec = Recording(f"{lab.work}/s2")
    tuned, sound, after_tuned, first_skew, early, later = [], [], [], [], [], []
    for _, _, started, t in rounds:
        if t:
            tuned.append((t - started) / 1e6)
        first = rec.first_sound(started)
        if first is None:
            continue
        sound.append((first - started) / 1e6)
        if t:
            after_tuned.append((first - t) / 1e6)
        a = clicks(f"{lab.work}/s1", written, (first - 3e9, first + 5e9))
        b = clicks(f"{lab.work}/s2", written, (first - 3e9, first + 5e9))
        pairs = sorted((b[i], abs(b[i] - a[i]) / 1e6) for i in a if i in b)
        if pairs:
            first_skew.append(pairs[0][1])
        early += [s for h, s in pairs if h < first + 2e9]
        later += [s for h, s in pairs if first + 2e9 <= h]
    print(f"  start -> tuned_in:                        {ms_summary(tuned)}")
    print(f"  start -> first sound at its sink:         {ms_summary(sound)}")
    print(f"  tuned_in -> first sound at its sink:      {ms_summary(after_tuned)}")
    print(f"  |skew| against speaker 1, first click:    {ms_summary(first_skew, 3)}")
    print(f"  |skew|, clicks in its first 2 s of sound: {ms_summary(early, 3)}")
    print(f"  |skew|, clicks 2-5 s after its first:     {ms_summary(later, 3)}")
    blocks = [f"{a / 1000:g}/{b / 1000:g}" if a is not None and b is not None else "?" for a, b in lab.sink_blocks]
    print(f"  sinks' configured latency (speaker 1's / 2's, ms; the monitor's block): {', '.join(blocks)}")


def print_many(lab, written, many, idle):
    import itertools
    window, cpu, threads, load, final, after, bare = many
    recorded = sorted(lab.recorded)
    print(f"\nmany: {SPEAKERS} speakers on hosts {SPEAKER_HOSTS[0]}-{SPEAKER_HOSTS[-1]}: {len(recorded)} playing, "
          f"each into a null sink of its own, recorded; {SPEAKERS - len(recorded)} --no-audio; {MEASURE:.0f} s")
    heard = {n: clicks(f"{lab.work}/s{n}", written, window) for n in recorded}
    inside = sum(1 for w in written.values() if window[0] <= w <= window[1])
    skews, spreads = [], []
    for a, b in itertools.combinations(recorded, 2):
        skews += [abs(heard[a][i] - heard[b][i]) / 1e6 for i in heard[a] if i in heard[b]]
    for i in range(max(written) + 1):
        times = [heard[n][i] for n in recorded if i in heard[n]]
        if len(times) == len(recorded):
            spreads.append((max(times) - min(times)) / 1e6)
    floor_a, floor_b = heard[1], clicks(f"{lab.work}/s1b", written, window) if FLOOR else {}
    floor = [abs(floor_a[i] - floor_b[i]) / 1e6 for i in floor_a if i in floor_b]
    short = {n: inside - len(heard[n]) for n in recorded if len(heard[n]) < inside}
    print(f"  |skew| of every recorded pair on every click: {ms_summary(skews, 3)}")
    print(f"  a click's spread over all {len(recorded)} (latest - earliest): {ms_summary(spreads, 3)}")
    print(f"  harness floor (two recorders on speaker 1's sink): {ms_summary(floor, 3)}")
    # Which speaker moved: each one's clicks against the median of all the speakers on the same click
    # (what moves them all alike, the writer's or the DJ's timing, leaves this as it leaves the skew).
    import statistics
    middles = {i: statistics.median(heard[n][i] for n in recorded) for i in written
               if all(i in heard[n] for n in recorded)}
    for n in recorded:
        own = [abs(heard[n][i] - middles[i]) / 1e6 for i in heard[n] if i in middles]
        print(f"    Spk{n} against the median of all on each click: {ms_summary(own, 3)}")
    if short:
        print("  clicks not heard: " + ", ".join(f"Spk{n} {k} of {inside}" for n, k in short.items()))
    playing = sum(1 for e in final.values() if e.get("playing"))
    errors = [abs(e["sync_error_ms"]) for e in final.values() if e.get("sync_error_ms") is not None]
    print(f"  the DJ's last list: {len(final)} speakers, {playing} playing; their own |sync error| "
          f"{ms_summary(errors, 2)}")
    idle_cpu, idle_threads = idle
    changes = sum(1 for at, _ in lab.listed() if window[0] <= at <= window[1])
    print(f"  the DJ's `speakers` events over those {MEASURE:.0f} s: {changes} ({changes / MEASURE:.1f} a second)")
    base = (idle_cpu + after[0]) / 2
    print(f"  DJ CPU: {cpu:.2f} % of a core with {SPEAKERS} speakers; without any, {idle_cpu:.2f} % before they "
          f"were started and {after[0]:.2f} % after they stopped ({CPU_SECONDS:.0f} s each): "
          f"{cpu - base:+.2f} % for the speakers against the mean of the two")
    print(f"  DJ CPU with {SPEAKERS} bare members of its groups in the speakers' places: {bare[0]:.2f} % "
          f"({bare[0] - base:+.2f} %: this machine's kernel delivering the group's datagrams to {SPEAKERS} local "
          f"sockets, in the DJ's sendto); the speakers less the members: {cpu - bare[0]:+.2f} %, what the DJ "
          f"itself spends on them")
    for name, value in sorted(threads.items(), key=lambda kv: -kv[1])[:5]:
        print(f"      {name:20s} {value:5.2f} %  (without: {idle_threads.get(name, 0):5.2f} % before, "
              f"{after[1].get(name, 0):5.2f} % after)")
    print(f"  load average meanwhile: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def print_clock_errors(work, numbers):
    """TRACE=1: each recorded speaker's station-clock estimate against the DJ's own clock, at the same
    real instants (the DJ's trace interpolated), over the whole run, and its worst second."""
    def load(path):
        try:
            with open(path) as handle:
                rows = [json.loads(line) for line in handle if line.startswith("{")]
        except FileNotFoundError:
            return []
        return [(r["true_time_ns"], r["dj_time_ns"]) for r in rows if r.get("dj_time_ns") is not None]
    dj = load(f"{work}/trace-dj.jsonl")
    if len(dj) < 2:
        print("\nclock errors: no DJ trace")
        return
    import bisect
    times = [t for t, _ in dj]

    def dj_at(t):
        i = min(max(bisect.bisect_left(times, t), 1), len(dj) - 1)
        (t0, d0), (t1, d1) = dj[i - 1], dj[i]
        return d0 + (d1 - d0) * (t - t0) / max(t1 - t0, 1)
    print("\nclock errors (a speaker's estimate of the station clock less the DJ's clock, TRACE=1):")
    for number in numbers:
        rows = [(t, d - dj_at(t)) for t, d in load(f"{work}/trace{number}.jsonl") if times[0] <= t <= times[-1]]
        if not rows:
            print(f"  Spk{number}: no trace")
            continue
        errors = [abs(e) / 1e6 for _, e in rows]
        worst = max(rows, key=lambda r: abs(r[1]))
        print(f"  Spk{number}: {ms_summary(errors, 3)}; worst at {(worst[0] - rows[0][0]) / 1e9:.1f} s of its trace, "
              f"{worst[1] / 1e6:+.3f} ms")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--write":
        return write(sys.argv[2], sys.argv[3])
    if len(sys.argv) > 1 and sys.argv[1] == "--record":
        server, sink, out = sys.argv[2:5]  # bench-speaker.py's recorder, on this sink
        return speaker_bench.record(server, out, sink=sink)
    if len(sys.argv) > 1 and sys.argv[1] == "--member":
        return member(sys.argv[2], int(sys.argv[3]))
    if len(sys.argv) > 1 and sys.argv[1] == "--poster":
        return poster(*sys.argv[2:5])
    require_root()
    speaker_bench.PACKAGES[:] = PACKAGES
    speaker_bench.ensure_packages()
    try:
        import numpy  # noqa: F401
    except ImportError:
        os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__), *sys.argv[1:]])
    parts = sys.argv[1:] or ["volume", "trim", "gone", "many"]
    unknown = [p for p in parts if p not in ("volume", "trim", "gone", "many")]
    if unknown:
        sys.exit(f"bench-speakers: unknown part {unknown[0]!r} (volume, trim, gone, many)")
    if STATION not in ("live", "file"):
        sys.exit(f"bench-speakers: STATION is live or file, not {STATION!r}")
    random.seed(SEED)
    # SIGTERM as Ctrl-C: the testbed is taken down on the way out.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    work = tempfile.mkdtemp(prefix="partyradio-speakers-")
    os.chmod(work, 0o755)
    if STATION == "file":
        make_library(f"{work}/library")
    station = ("a live station (dj --live pipe:, --no-audio)" if STATION == "live" else
               f"a file station (dj --library of {TRACKS} WAV tracks of {TRACK_SECONDS:.0f} s, --no-audio)")
    print(f"speakers: partyradio {sh(BIN, '--version')} ({BIN}); {station} on "
          f"host 1, speakers into PulseAudio null sinks on hosts 2-5; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    lab, marks, begun = None, {}, mono()
    try:
        lab = Lab(work)
        time.sleep(2)
        idle = dj_cpu(lab, CPU_SECONDS) if "many" in parts else None
        lab.start_speaker(1)
        lab.start_speaker(2)
        lab.playing(["Spk1", "Spk2"])
        time.sleep(3)
        for part in ("volume", "trim", "gone", "many"):
            if part in parts:
                {"volume": part_volume, "trim": part_trim, "gone": part_gone, "many": part_many}[part](lab, marks)
    finally:
        if lab:
            lab.close()
    if STATION == "live":
        written = written_clicks(f"{work}/writer.log")
    else:
        written = reference_clicks(f"{work}/s1")
        # Every part stands on these: where speaker 1 had no click heard, nothing is measured.
        spans = [f"{(w + SHIFT - begun) / 1e9:.0f}" for w in (min(written.values()), max(written.values()))] \
            if written else ["-", "-"]
        print(f"\nspeaker 1's clicks, the reference: {len(written)} heard, from {spans[0]} s to {spans[1]} s "
              f"after the start (none while its volume is 20)")
    if "volume" in marks:
        print_volume(lab, marks["volume"])

    def print_timed():
        if "trim" in marks:
            print_trim(lab, written, marks["trim"])
        if "gone" in marks:
            print_gone(lab, written, marks["gone"])
        if "many" in marks:
            print_many(lab, written, marks["many"], idle)

    print_timed()
    if TRACE:
        print_clock_errors(work, sorted(lab.recorded) if lab else [])
    if os.environ.get("COMPARE_TIMELINE") == "1" and os.environ.get("TIMELINE", "local") != "line":
        # The same recordings again on one fitted line per recording, as before the Timeline.
        os.environ["TIMELINE"] = "line"
        _HEARD.clear()
        print("\n--- the same recordings, each on one fitted line (TIMELINE=line) ---")
        print_timed()
    print(f"\nload at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    keep_or_remove(work, "recordings and logs")


if __name__ == "__main__":
    main()
