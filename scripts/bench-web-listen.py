#!/usr/bin/env python3
"""Listening in the browser, measured against the DJ's trace (needs root; the namespace testbed).

A DJ on host 1 plays the demo library through mpv's null output with `--trace` and a clock that is
wrong on purpose (+350 ms, +80 ppm: the page must estimate the DJ clock, not trust its own). Headless
Chromium on host 2 opens the page (Tests/Fixtures/web/browser.py), presses "Listen" and plays for
MEASURE seconds (default 60). The page records, every half second, the instant (wall clock) and the
track position its Web Audio output is at (from AudioContext.getOutputTimestamp). Every namespace
shares the machine's clock, so each sample is compared with where the station truly was at that
instant, from the DJ's trace:

  browser error = the page's output position - the station position (truth) at the same instant
  page's own estimate = what the page itself reports (window.partyradioListen.errorsMs)

Samples within SETTLE seconds (default 2) of a track start are reported apart ("after a start"):
the first half second of a track is where the page schedules its start and corrects it.
"""
import json, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, ROOT, TESTBED, read_trace, require_root, spawn, station_truth, testbed_down, testbed_up,
                      upper_percentile as percentile, wait_event)

BROWSER = os.path.join(ROOT, "Tests", "Fixtures", "web", "browser.py")
MEASURE = max(10.0, float(os.environ.get("MEASURE", "60")))
SETTLE = float(os.environ.get("SETTLE", "2"))
DJ_CLOCK = (350, 80)


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
    try:
        spawn(lan, 1, f"{work}/dj.log", BIN, "dj", "--name", "Listen bench", "--json-events",
              "--audio-driver", "null", "--trace", f"{work}/dj.jsonl", "--clock-offset-ms", str(DJ_CLOCK[0]),
              "--clock-drift-ppm", str(DJ_CLOCK[1]), "--state-dir", f"{work}/dj")
        url = wait_event(f"{work}/dj.log", lambda e: e.get("event") == "web_page", timeout=20, poll=0.1)["url"]
        browser = subprocess.Popen(
            [TESTBED, "run", lan, "2", "/usr/bin/python3", BROWSER, "--url", url, "--width", "1280"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        ready = json.loads(browser.stdout.readline() or "{}")
        if not ready.get("ready"):
            sys.exit(f"bench: the browser did not start: {ready}")
        # The page load as Chromium timed it (navigation timing), on a reload: the first load also
        # pays for starting the browser's renderer.
        browser.stdin.write(json.dumps({"cmd": "reload"}) + "\n")
        browser.stdout.readline()
        browser.stdin.write(json.dumps({"cmd": "eval", "js": (
            "const n = performance.getEntriesByType('navigation')[0];"
            "return {response: n.responseEnd - n.requestStart, dom: n.domContentLoadedEventEnd - n.fetchStart,"
            " load: n.loadEventEnd - n.fetchStart, bytes: n.transferSize, body: n.decodedBodySize};")}) + "\n")
        load = json.loads(browser.stdout.readline() or "{}").get("value") or {}
        browser.stdin.write(json.dumps({"cmd": "listen", "seconds": MEASURE, "samples": True,
                                        "timeout": 30}) + "\n")
        answer = json.loads(browser.stdout.readline() or "{}")
        listen = answer.get("listen", {})
        browser.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
    finally:
        if browser:
            try:
                browser.wait(timeout=15)
            except subprocess.TimeoutExpired:
                browser.kill()
        testbed_down(lan)

    _, true_station_ms = station_truth(read_trace(f"{work}/dj.jsonl"))

    steady, starting = [], []
    for sample in listen.get("samples") or []:
        true_ns = sample["perfUs"] * 1000
        truth = true_station_ms(true_ns, sample["trackId"])
        if truth is None:
            continue
        error = sample["positionUs"] / 1000 - truth
        (starting if truth < SETTLE * 1000 else steady).append(error)
    own = listen.get("errorsMs") or []
    print(f"partyradio browser listening benchmark: headless Chromium (Web Audio, its fake audio output) on "
          f"host 2, DJ on host 1 with its clock {DJ_CLOCK[0]:+d} ms / {DJ_CLOCK[1]:+d} ppm off, "
          f"{MEASURE:.0f} s listened")
    if load:
        print(f"page load in Chromium (navigation timing): request -> last byte {load.get('response', 0):.1f} ms, "
              f"DOM ready {load.get('dom', 0):.1f} ms, load event {load.get('load', 0):.1f} ms after the fetch starts, "
              f"{load.get('bytes')} B on the wire ({load.get('body')} B page)")
    print(f"clock channel: best round trip {listen.get('clockRttMs')} ms over GET /api/time")
    print(f"browser vs DJ trace, steady        {summary(steady)}")
    print(f"browser vs DJ trace, after a start {summary(starting)}")
    print(f"the page's own estimate            {summary(own)}")
    print(f"restarts of the audio source: {listen.get('restarts')}; traces kept in {work}")


if __name__ == "__main__":
    main()
