#!/usr/bin/env python3
"""Web page benchmark on the namespace testbed (needs root; every node runs in a test namespace).

A DJ on host 1 (`--voters-per-address 1000`, so that every fresh browser guest from one host
counts), browsers on hosts 2 and 3: this script drives them by running itself on those hosts
(`bench-web.py agent ...`), with a minimal hand-written HTTP/1.1 client. The station is paused
first (the DJ's token, `/api/dj command=pause`), so that the 20-40 s demo tracks do not change
under the votes: every vote is on one track and each moves the tally by one.

Prints:
  1. page load from host 2: bytes and time (connect to last byte) of `GET /` and `GET /api/state`,
     LOADS fresh connections each
  2. VOTES votes from host 2, each from a fresh guest (no cookie): POST sent -> its answer (with
     the DJ's tally), and POST sent -> the state event with that tally on a stream held open on host 3
  3. STREAMS event streams open at once on host 2 (from 15 extra source addresses, the server
     takes 8 connections per address), CHANGES votes from host 3 one every 100 ms: the delay from
     each POST until each stream has the new tally (every delivery), streams that missed a change,
     and the DJ's CPU, resident memory and threads with the streams open against the same
     changes with none open; then the threads left after the streams close.
"""
import json, os, selectors, socket, struct, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, TESTBED, cpu_seconds, now_ns, proc_status, require_root, sh, spawn, testbed_down,
                      testbed_up, wait_event)
import benchlib

SELF = os.path.abspath(__file__)
LOADS = max(5, int(os.environ.get("LOADS", "50")))
VOTES = max(5, int(os.environ.get("VOTES", "200")))
STREAMS = max(1, int(os.environ.get("STREAMS", "100")))
CHANGES = max(5, int(os.environ.get("CHANGES", "50")))
STATION = "Bench web"
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # also SCM_TIMESTAMPNS (Linux)
EXTRA_HOSTS = range(100, 115)  # 15 extra addresses on host 2 for the streams: at most 7 each


# ---------------------------------------------------------------------------------------------
# The browser side (runs on a testbed host): a minimal HTTP/1.1 client.

class Response:
    def __init__(self, status, headers, body, wire_bytes):
        self.status, self.headers, self.body, self.wire_bytes = status, headers, body, wire_bytes


def request(host, port, method, path, body=b"", headers=(), source=None):
    """One request on a fresh connection. Returns (response, connect_ns, sent_ns, last_byte_ns)."""
    connect_ns = now_ns()
    sock = socket.create_connection((host, port), timeout=15, source_address=(source, 0) if source else None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close", *headers]
        if method == "POST":
            lines += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(body)}"]
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        sent_ns = now_ns()
        sock.sendall(raw)
        data, last, head_end, length = b"", sent_ns, -1, None
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            last = now_ns()
            if head_end < 0:
                head_end = data.find(b"\r\n\r\n")
                if head_end >= 0:
                    for line in data[:head_end].split(b"\r\n")[1:]:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
            if head_end >= 0 and length is not None and len(data) >= head_end + 4 + length:
                break
    finally:
        sock.close()
    head, body = data[:head_end], data[head_end + 4:]
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), value.strip())
    return Response(int(status_line.split()[1]), headers, body, len(data)), connect_ns, sent_ns, last


class Stream:
    """One server-sent event stream: dechunks, splits events, keeps (time_ns, up, down) of each state."""

    def __init__(self, host, port, source):
        self.sock = socket.create_connection((host, port), timeout=15, source_address=(source, 0))
        # The kernel's arrival time of what each recvmsg returns: what the figures use, so that
        # this one Python thread reading 100 sockets in turn does not count as the server's delay.
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.sendall(f"GET /api/events HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n"
                          .encode())
        self.sock.setblocking(False)
        self.raw, self.text, self.head_done, self.chunked = b"", b"", False, False
        self.states, self.closed, self.pings = [], False, 0

    def feed(self):
        try:
            chunk, ancillary, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(16))
        except BlockingIOError:
            return
        except ConnectionError:
            self.closed = True
            return
        user = now_ns()
        at = user
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
                seconds, nanoseconds = struct.unpack("qq", data[:16])
                at = seconds * 1_000_000_000 + nanoseconds
        if not chunk:
            self.closed = True
            return
        self.raw += chunk
        if not self.head_done:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.raw[:end].decode("latin-1").lower()
            self.chunked = "transfer-encoding: chunked" in head
            self.raw, self.head_done = self.raw[end + 4:], True
        if self.chunked:
            while True:
                line_end = self.raw.find(b"\r\n")
                if line_end < 0:
                    break
                size = int(self.raw[:line_end].split(b";")[0], 16)
                if size == 0:
                    self.closed = True
                    break
                if len(self.raw) < line_end + 2 + size + 2:
                    break
                self.text += self.raw[line_end + 2:line_end + 2 + size]
                self.raw = self.raw[line_end + 2 + size + 2:]
        else:
            self.text, self.raw = self.text + self.raw, b""
        while True:
            end = self.text.find(b"\n\n")
            if end < 0:
                break
            event, self.text = self.text[:end], self.text[end + 2:]
            kind, data = None, None
            for line in event.split(b"\n"):
                if line.startswith(b"event:"):
                    kind = line[6:].strip()
                elif line.startswith(b"data:"):
                    data = line[5:].strip()
                elif line.startswith(b":"):
                    self.pings += 1
            if kind == b"state" and data is not None:
                tally = json.loads(data).get("tally") or {}
                self.states.append((at, tally.get("up", 0), tally.get("down", 0), user))


def agent_load(host, port, loads):
    out = {}
    for path in ("/", "/api/state"):
        runs = []
        for _ in range(loads):
            response, connect, _, last = request(host, port, "GET", path)
            if response.status != 200:
                raise SystemExit(f"GET {path}: {response.status}")
            runs.append({"ms": (last - connect) / 1e6, "body": len(response.body), "wire": response.wire_bytes})
        out[path] = runs
    print(json.dumps(out))


def agent_vote(host, port, count, track, interval, gap):
    """`count` votes, each from a fresh guest, alternately up and down, one every `interval` s (or
    `gap` s after the previous answer). Prints one JSON line per vote."""
    origin = f"Origin: http://{host}:{port}"
    started = time.monotonic()
    for k in range(count):
        if interval:
            time.sleep(max(0.0, started + k * interval - time.monotonic()))
        body = f"track={track}&choice={'up' if k % 2 == 0 else 'down'}".encode()
        response, connect, sent, last = request(host, port, "POST", "/api/vote", body, [origin])
        answer = json.loads(response.body or b"{}")
        print(json.dumps({"status": response.status, "vote": answer.get("status"), "tally": answer.get("tally"),
                          "connect_ns": connect, "sent_ns": sent, "answer_ns": last}), flush=True)
        if gap:
            time.sleep(gap)


def agent_streams(host, port, count, sources, out_path, stop_path):
    """Holds `count` event streams open (spread over `sources`) until `stop_path` exists, then
    writes every stream's states to `out_path`."""
    began = now_ns()
    streams = [Stream(host, port, sources[i % len(sources)]) for i in range(count)]
    selector = selectors.DefaultSelector()
    for index, stream in enumerate(streams):
        selector.register(stream.sock, selectors.EVENT_READ, stream)
    announced = False
    while not os.path.exists(stop_path):
        for key, _ in selector.select(timeout=0.05):
            stream = key.data
            stream.feed()
            if stream.closed:
                selector.unregister(stream.sock)
        if not announced and all(s.states for s in streams):
            print(json.dumps({"ready": now_ns(), "began": began, "streams": len(streams)}), flush=True)
            announced = True
    with open(out_path, "w") as handle:
        json.dump([{"states": s.states, "closed": s.closed, "pings": s.pings} for s in streams], handle)
    for stream in streams:
        stream.sock.close()


def agent(args):
    role, host, port = args[0], args[1], int(args[2])
    if role == "load":
        agent_load(host, port, int(args[3]))
    elif role == "vote":
        agent_vote(host, port, int(args[3]), args[4], float(args[5]), float(args[6]))
    elif role == "streams":
        agent_streams(host, port, int(args[3]), args[4].split(","), args[5], args[6])
    elif role == "dj":  # a DJ command with the token: dj HOST PORT TOKEN COMMAND
        response, *_ = request(host, port, "POST", "/api/dj", f"command={args[4]}".encode(),
                               [f"Origin: http://{host}:{port}", f"X-DJ-Token: {args[3]}"])
        print(response.status, response.body.decode())
    elif role == "state":
        response, *_ = request(host, port, "GET", "/api/state")
        print(response.body.decode())


# ---------------------------------------------------------------------------------------------
# The driver (the root namespace: starts hosts and processes, reads /proc, prints figures).

def on(lan, host, *args):
    return sh(TESTBED, "run", lan, str(host), sys.executable, SELF, "agent", *args)


def wait_for(log, predicate):
    return wait_event(log, predicate, timeout=20.0, poll=0.01)


def report(name, values_ms, extra=""):
    benchlib.report("  " + name, values_ms, width=60, count=5, size=7, digits=2, extra=extra)


def status(pid):
    values = proc_status(pid)
    return int(values["VmRSS"].split()[0]) / 1024, int(values["Threads"])


def votes(output):
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def delivered(states, up, down, after_ns, user=False):
    """When a stream first had (at least) this tally: the exact one, or a later one if the stream
    skipped it (the server sends the latest state, so changes close together may come as one).
    The kernel's arrival time, or with `user` when the reading Python thread got it."""
    pick = 3 if user else 0
    exact = next((s[pick] for s in states if s[0] >= after_ns and (s[1], s[2]) == (up, down)), None)
    if exact is not None:
        return exact, True
    later = next((s[pick] for s in states if s[0] >= after_ns and s[1] >= up and s[2] >= down), None)
    return later, False


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "agent":
        return agent(sys.argv[2:])
    require_root()
    work = tempfile.mkdtemp(prefix="partyradio-bench-web-")
    lan = testbed_up(3, "--tag", "bench")
    dj = None
    try:
        dj_log = f"{work}/dj.log"
        dj = spawn(lan, 1, dj_log, BIN, "dj", "--name", STATION, "--no-audio", "--json-events",
                   "--voters-per-address", "1000", "--state-dir", f"{work}/dj")
        page = wait_for(dj_log, lambda e: e.get("event") == "web_page")
        wait_for(dj_log, lambda e: e.get("event") == "station_published")
        url, token = page["url"], page["dj_url"].split("#dj=")[1]
        host, port = url.split("//")[1].rstrip("/").split(":")
        subnet = sh(TESTBED, "ip", lan, "2").rsplit(".", 1)[0]
        paused = on(lan, 2, "dj", host, port, token, "pause")
        if not paused.startswith("20"):
            raise RuntimeError(f"pause: {paused}")
        time.sleep(0.3)
        state = json.loads(on(lan, 2, "state", host, port))
        track = state["now"]["id"]
        print(f"partyradio web benchmark: DJ on host 1 (paused on one track), browsers on hosts 2 and 3, "
              f"binary {BIN}")

        # 1. Page load.
        loads = json.loads(on(lan, 2, "load", host, port, str(LOADS)))
        print(f"1. page load from another host, {LOADS} fresh connections each (connect -> last byte)")
        for path, runs in loads.items():
            sizes = sorted({r["body"] for r in runs})
            report(f"GET {path:10s} ({sizes[-1]} B body, {runs[-1]['wire']} B on the wire)",
                   [r["ms"] for r in runs])

        # 2. Votes -> the answer, and -> the state event on a stream on host 3.
        done2 = f"{work}/stop-2"
        watcher_log = f"{work}/watch.log"
        watcher = spawn(lan, 3, watcher_log, sys.executable, SELF, "agent", "streams", host, port,
                        "1", sh(TESTBED, "ip", lan, "3"), f"{work}/watch.json", done2)
        wait_for(watcher_log, lambda e: "ready" in e)
        cast = votes(on(lan, 2, "vote", host, port, str(VOTES), track, "0", "0.02"))
        time.sleep(0.5)
        open(done2, "w").close()
        for _ in range(500):
            if os.path.exists(f"{work}/watch.json") and not os.path.exists(f"/proc/{watcher}"):
                break
            time.sleep(0.01)
        states = json.load(open(f"{work}/watch.json"))[0]["states"]
        refused = [v for v in cast if v["vote"] != "counted"]
        answers, events, events_user, exact_count, missed = [], [], [], 0, 0
        for v in cast:
            answers.append((v["answer_ns"] - v["sent_ns"]) / 1e6)
            if v["vote"] != "counted":
                continue
            at, exact = delivered(states, v["tally"]["up"], v["tally"]["down"], v["sent_ns"])
            if at is None:
                missed += 1
                continue
            exact_count += exact
            events.append((at - v["sent_ns"]) / 1e6)
            events_user.append((delivered(states, v["tally"]["up"], v["tally"]["down"], v["sent_ns"], True)[0]
                                - v["sent_ns"]) / 1e6)
        print(f"2. {VOTES} votes from host 2, each from a fresh guest; a stream held open on host 3")
        report("POST sent -> its answer (with the DJ's tally)", answers)
        report("POST sent -> the state event with that tally on host 3", events)
        report("  the same, read by the client's thread", events_user)
        print(f"  votes counted {len(cast) - len(refused)} of {len(cast)}; the stream had {exact_count} tallies "
              f"exactly, {len(events) - exact_count} only as a later state, missed {missed}")

        # 3. STREAMS streams and CHANGES changes, against the same changes with no streams.
        rss_before, threads_before = status(dj)
        cpu0, wall0 = cpu_seconds(dj), time.monotonic()
        quiet = votes(on(lan, 3, "vote", host, port, str(CHANGES), track, "0.1", "0"))
        cpu_idle = (cpu_seconds(dj) - cpu0) / (time.monotonic() - wall0)
        sources = [f"{subnet}.{i}" for i in EXTRA_HOSTS]
        for source in sources:
            sh(TESTBED, "run", lan, "2", "ip", "addr", "add", f"{source}/24", "dev", "eth0")
        done3, streams_log = f"{work}/stop-3", f"{work}/streams.log"
        streamer = spawn(lan, 2, streams_log, sys.executable, SELF, "agent", "streams", host, port,
                         str(STREAMS), ",".join(sources), f"{work}/streams.json", done3)
        ready = wait_for(streams_log, lambda e: "ready" in e)
        open_ms = (ready["ready"] - ready["began"]) / 1e6
        time.sleep(1)
        rss_open, threads_open = status(dj)
        cpu0, wall0 = cpu_seconds(dj), time.monotonic()
        changes = votes(on(lan, 3, "vote", host, port, str(CHANGES), track, "0.1", "0"))
        cpu_open = (cpu_seconds(dj) - cpu0) / (time.monotonic() - wall0)
        time.sleep(1)
        rss_after_changes, threads_after_changes = status(dj)
        open(done3, "w").close()
        for _ in range(1000):
            if not os.path.exists(f"/proc/{streamer}"):
                break
            time.sleep(0.01)
        results = json.load(open(f"{work}/streams.json"))
        closed_early = sum(1 for r in results if r["closed"])
        delays, user_delays, firsts, lasts, missed3, skipped = [], [], [], [], 0, 0
        for v in changes:
            if v["vote"] != "counted":
                continue
            arrivals = []
            for r in results:
                at, exact = delivered(r["states"], v["tally"]["up"], v["tally"]["down"], v["sent_ns"])
                if at is None:
                    missed3 += 1
                else:
                    skipped += not exact
                    arrivals.append((at - v["sent_ns"]) / 1e6)
                    user_at, _ = delivered(r["states"], v["tally"]["up"], v["tally"]["down"], v["sent_ns"], user=True)
                    user_delays.append((user_at - v["sent_ns"]) / 1e6)
            delays += arrivals
            if arrivals:
                firsts.append(min(arrivals))
                lasts.append(max(arrivals))
        # Threads after the streams closed: a connection thread blocked in the stream waits for the
        # next event or keep-alive (5 s) before it finds its client gone.
        closed_at = time.monotonic()
        threads_closed = {}
        while time.monotonic() - closed_at < 12:
            time.sleep(0.5)
            threads_closed[round(time.monotonic() - closed_at)] = status(dj)[1]
        rss_closed, threads_final = status(dj)
        counted = sum(1 for v in changes if v["vote"] == "counted")
        print(f"3. {STREAMS} event streams on host 2 from {len(sources)} source addresses "
              f"(all open with their first state in {open_ms:.0f} ms), {CHANGES} votes from host 3 one every 100 ms")
        report("POST sent -> its answer, no stream open", [(v["answer_ns"] - v["sent_ns"]) / 1e6 for v in quiet])
        report(f"POST sent -> its answer, {STREAMS} streams open", [(v["answer_ns"] - v["sent_ns"]) / 1e6 for v in changes])
        report("POST sent -> the state in a stream (every delivery)", delays)
        report("POST sent -> the state in the first of the streams", firsts)
        report("POST sent -> the state in the last of the streams", lasts)
        report("  the same, every delivery, read by the client's thread", user_delays)
        print(f"  changes counted {counted} of {len(changes)}; deliveries {len(delays)} of {counted * STREAMS}, "
              f"missed {missed3}, seen only as a later state {skipped}; streams closed by the server {closed_early}")
        print(f"  DJ CPU over the {CHANGES} changes: {cpu_idle * 100:.1f} % of a core with no stream open, "
              f"{cpu_open * 100:.1f} % with {STREAMS} open")
        print(f"  DJ memory (VmRSS) / threads: {rss_before:.1f} MiB / {threads_before} before the streams, "
              f"{rss_open:.1f} MiB / {threads_open} with them open, {rss_after_changes:.1f} MiB / "
              f"{threads_after_changes} after the changes, {rss_closed:.1f} MiB / {threads_final} 12 s after closing")
        print(f"  DJ threads after the streams closed (s: threads): "
              + ", ".join(f"{k}: {v}" for k, v in sorted(threads_closed.items())))
    finally:
        if dj is not None:
            subprocess.run(["kill", "-INT", str(dj)], capture_output=True)
            time.sleep(0.5)
        testbed_down(lan)


if __name__ == "__main__":
    main()
