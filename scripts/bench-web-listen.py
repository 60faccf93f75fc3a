#!/usr/bin/env python3
"""Listening in the browser, measured against the DJ's trace (needs root; the namespace testbed).

A DJ on host 1 plays the demo library through mpv's null output with `--trace` and a clock that is
wrong on purpose (+350 ms, +80 ppm: the page must estimate the DJ clock, not trust its own). A browser
on host 2 (ENGINE: chromium, the default, headless; webkit, WebKitGTK's MiniBrowser under Xvfb; or
firefox, Firefox ESR headless) opens the page (Tests/Fixtures/web/browser.py), presses "Listen" and
plays for MEASURE seconds (default 60). WebKit and Firefox play into a PulseAudio of their own on
host 2 (a null sink); Chromium headless plays into its own fake output. The page records, every half second, the instant (wall clock) and the
track position its Web Audio output is at (from AudioContext.getOutputTimestamp). Every namespace
shares the machine's clock, so each sample is compared with where the station truly was at that
instant, from the DJ's trace:

  browser error = the page's output position - the station position (truth) at the same instant
  page's own estimate = what the page itself reports (window.partyradioListen.errorsMs)

Samples within SETTLE seconds (default 2) of a track start are reported apart ("after a start"):
the first half second of a track is where the page schedules its start and corrects it.

SPEAKER=1 (webkit, firefox): the error at the speaker, which does not take the page's word. The DJ
plays a click track instead (a 4 ms burst at every second of its position); a recorder on host 2
reads the null sink's monitor and timestamps what it reads (scripts/bench-speaker.py --record); each
click heard at true instant T is compared with where the station was at T:

  speaker error = the click's position - the station position (truth) at the instant it was heard
"""
import importlib.util, json, os, struct, subprocess, sys, tempfile, time, wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, ROOT, TESTBED, null_sink, read_trace, require_root, spawn, station_truth, testbed_down, testbed_up,
                      upper_percentile as percentile, wait_event)

BROWSER = os.path.join(ROOT, "Tests", "Fixtures", "web", "browser.py")
SPEAKER_BENCH = os.path.join(ROOT, "scripts", "bench-speaker.py")
MEASURE = max(10.0, float(os.environ.get("MEASURE", "60")))
SETTLE = float(os.environ.get("SETTLE", "2"))
ENGINE = os.environ.get("ENGINE", "chromium")
SPEAKER = os.environ.get("SPEAKER") == "1" and ENGINE != "chromium"
DJ_CLOCK = (350, 80)
RATE = 48000
CLICK_EVERY = 1.0


def click_track(folder, seconds=240):
    """A WAV of silence with a 4 ms 3 kHz burst at every CLICK_EVERY seconds of its position."""
    os.makedirs(folder, exist_ok=True)
    import math
    frames = bytearray(seconds * RATE * 2)
    burst = int(0.004 * RATE)
    step = int(CLICK_EVERY * RATE)
    for start in range(0, seconds * RATE, step):
        for i in range(burst):
            struct.pack_into("<h", frames, (start + i) * 2, int(16000 * math.sin(2 * math.pi * 3000 * i / RATE)))
    with wave.open(os.path.join(folder, "clicks.wav"), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(RATE)
        handle.writeframes(bytes(frames))


def start_sound_server(lan, work):
    """PulseAudio on host 2 with a null sink `party`, as scripts/bench-speaker.py runs it."""
    home = f"{work}/pa"
    os.makedirs(home, exist_ok=True)
    spawn(lan, 2, f"{work}/pa.log", "/usr/bin/env", f"HOME={home}", f"XDG_RUNTIME_DIR={home}",
          "/usr/bin/pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
          "--disallow-exit", "--log-target=stderr", "-L", null_sink("party", RATE),
          "-L", f"module-native-protocol-unix socket={home}/native auth-anonymous=1")
    deadline = time.time() + 15
    while not os.path.exists(f"{home}/native"):
        if time.time() > deadline:
            sys.exit(f"bench: PulseAudio did not start on host 2: see {work}/pa.log")
        time.sleep(0.05)
    return f"unix:{home}/native"


def clicks_heard(base, realtime_minus_monotonic):
    """The true instants (CLOCK_REALTIME ns) at which the recording's clicks began."""
    spec = importlib.util.spec_from_file_location("bench_speaker", SPEAKER_BENCH)
    speaker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speaker)
    start_ns, ppm = speaker.sample_clock(base + ".times")
    with open(base + ".raw", "rb") as handle:
        raw = handle.read()
    samples = struct.unpack(f"<{len(raw) // 2}h", raw[: len(raw) // 2 * 2])
    out, quiet = [], 0
    for i, x in enumerate(samples):
        if abs(x) > 2000:
            if quiet >= int(0.1 * RATE):
                out.append(start_ns + i / RATE * 1e9 * (1 + ppm / 1e6) + realtime_minus_monotonic)
            quiet = 0
        else:
            quiet += 1
    return out


def answer(browser):
    """The browser driver's next JSON line (WebKit's MiniBrowser and its helpers print lines of their own)."""
    while True:
        line = browser.stdout.readline()
        if not line:
            return {}
        if line.startswith("{"):
            return json.loads(line)


def summary(values):
    if not values:
        return "no samples"
    magnitudes = [abs(v) for v in values]
    return (f"|error| p50 {percentile(magnitudes, 0.5):.2f} ms  p99 {percentile(magnitudes, 0.99):.2f} ms  "
            f"max {max(magnitudes):.2f} ms  (mean signed {sum(values) / len(values):+.2f} ms, n={len(values)})")


def main():
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-weblisten-")
    lan = testbed_up(2, "--tag", "bench")
    browser = None
    recorder = None
    env = dict(os.environ)
    try:
        library = []
        if SPEAKER:
            click_track(f"{work}/library")
            library = ["--library", f"{work}/library"]
        spawn(lan, 1, f"{work}/dj.log", BIN, "dj", "--name", "Listen bench", "--json-events",
              "--audio-driver", "null", "--trace", f"{work}/dj.jsonl", "--clock-offset-ms", str(DJ_CLOCK[0]),
              "--clock-drift-ppm", str(DJ_CLOCK[1]), "--state-dir", f"{work}/dj", *library)
        url = wait_event(f"{work}/dj.log", lambda e: e.get("event") == "web_page", timeout=20, poll=0.1)["url"]
        if ENGINE != "chromium":
            env["PULSE_SERVER"] = start_sound_server(lan, work)
        if SPEAKER:
            recorder = spawn(lan, 2, f"{work}/rec.log", "/usr/bin/python3", SPEAKER_BENCH, "--record",
                             env["PULSE_SERVER"], f"{work}/rec")
        wrapper = (["/usr/bin/xvfb-run", "-a", "-s", "-screen 0 1600x1200x24", "/usr/bin/dbus-run-session", "--"]
                   if ENGINE == "webkit" else [])
        browser = subprocess.Popen(
            [TESTBED, "run", lan, "2", *wrapper, "/usr/bin/python3", BROWSER, "--engine", ENGINE, "--url", url,
             "--width", "1280"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
        ready = answer(browser)
        if not ready.get("ready"):
            sys.exit(f"bench: the browser did not start: {ready}")
        # The page load as Chromium timed it (navigation timing), on a reload: the first load also
        # pays for starting the browser's renderer.
        browser.stdin.write(json.dumps({"cmd": "reload"}) + "\n")
        answer(browser)
        browser.stdin.write(json.dumps({"cmd": "eval", "js": (
            "const n = performance.getEntriesByType('navigation')[0];"
            "return {response: n.responseEnd - n.requestStart, dom: n.domContentLoadedEventEnd - n.fetchStart,"
            " load: n.loadEventEnd - n.fetchStart, bytes: n.transferSize, body: n.decodedBodySize};")}) + "\n")
        load = answer(browser).get("value") or {}
        browser.stdin.write(json.dumps({"cmd": "listen", "seconds": MEASURE, "samples": True,
                                        "timeout": 30}) + "\n")
        listen = answer(browser).get("listen", {})
        with open(f"{work}/listen.json", "w") as handle:  # the page's figures and the engine's readings
            json.dump(listen, handle)
        browser.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
        realtime_minus_monotonic = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.monotonic_ns()
        if recorder:
            subprocess.run(["kill", "-TERM", str(recorder)], capture_output=True)
            time.sleep(1)
    finally:
        if browser:
            try:
                browser.wait(timeout=15)
            except subprocess.TimeoutExpired:
                browser.kill()
        testbed_down(lan)

    dj_trace = read_trace(f"{work}/dj.jsonl")
    _, true_station_ms = station_truth(dj_trace)
    speaker = []
    if SPEAKER:
        track = next((line["track_id"] for line in dj_trace if line.get("track_id")), None)
        for heard in clicks_heard(f"{work}/rec", realtime_minus_monotonic):
            truth = true_station_ms(int(heard), track)
            if truth is None or truth < SETTLE * 1000:
                continue
            nearest = round(truth / (CLICK_EVERY * 1000)) * CLICK_EVERY * 1000
            speaker.append(nearest - truth)

    steady, starting = [], []
    for sample in listen.get("samples") or []:
        true_ns = sample["perfUs"] * 1000
        truth = true_station_ms(true_ns, sample["trackId"])
        if truth is None:
            continue
        error = sample["positionUs"] / 1000 - truth
        (starting if truth < SETTLE * 1000 else steady).append(error)
    own = listen.get("errorsMs") or []
    output = "its fake audio output" if ENGINE == "chromium" else "a PulseAudio null sink"
    print(f"partyradio browser listening benchmark: {ENGINE} (Web Audio, {output}) on "
          f"host 2, DJ on host 1 with its clock {DJ_CLOCK[0]:+d} ms / {DJ_CLOCK[1]:+d} ppm off, "
          f"{MEASURE:.0f} s listened")
    if load:
        print(f"page load in {ENGINE} (navigation timing): request -> last byte {load.get('response', 0):.1f} ms, "
              f"DOM ready {load.get('dom', 0):.1f} ms, load event {load.get('load', 0):.1f} ms after the fetch starts, "
              f"{load.get('bytes')} B on the wire ({load.get('body')} B page)")
    print(f"clock channel: best round trip {listen.get('clockRttMs')} ms over GET /api/time")
    print(f"browser vs DJ trace, steady        {summary(steady)}")
    print(f"browser vs DJ trace, after a start {summary(starting)}")
    print(f"the page's own estimate            {summary(own)}")
    if SPEAKER:
        print(f"at the speaker vs DJ trace         {summary(speaker)}")
    readings = listen.get("readings") or []
    if len(readings) > 10:
        # The engine's own clock, read by the driver: does its output timestamp advance at the audio
        # clock's rate, and how far does its context time lag the current one (both taken to now)?
        a, b = readings[len(readings) // 4], readings[-1]
        rate = ((b["performanceTime"] - a["performanceTime"]) / ((b["contextTime"] - a["contextTime"]) * 1000)
                if b.get("contextTime") and a.get("contextTime") and b["contextTime"] != a["contextTime"] else None)
        lags = sorted((r["current"] - r["contextTime"]) * 1000 - (r["now"] - r["performanceTime"])
                      for r in readings if r.get("contextTime") and r.get("performanceTime"))
        print(f"{ENGINE}'s getOutputTimestamp: performanceTime advances {rate if rate is None else round(rate, 4)} x "
              f"its contextTime; context time lags currentTime by {lags[len(lags) // 2] if lags else float('nan'):.1f} ms "
              f"(median); outputLatency {b.get('outputLatency')} s, baseLatency {b.get('baseLatency')} s; "
              f"performanceTime - now {b['performanceTime'] - b['now'] if b.get('performanceTime') else float('nan'):.1f} ms")
    print(f"the page's clock: {listen.get('clock')}, latency added {listen.get('addedLatencyMs')} ms")
    print(f"restarts of the audio source: {listen.get('restarts')}; traces kept in {work}")


if __name__ == "__main__":
    main()
