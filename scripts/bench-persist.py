#!/usr/bin/env python3
"""Persistence benchmark on the namespace testbed (needs root; every node runs in a test namespace).

  restart: a DJ killed with kill -9 and started again with the same state directory; two listeners
           that ran throughout. Figures over RESTARTS runs: restart -> every listener hears the
           station again (its station_back), and kill -> that.
  crash:   the DJ killed with kill -9 at a random moment CRASHES times while two guests vote (one
           always up, one always down) and two chat. After each kill: PRAGMA integrity_check on the
           database, every chat line a guest saw acknowledged is in the saved chat, and each
           voter's last acknowledged vote is in the saved vote book if it is still on that track.
"""
import json, os, random, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BIN, TESTBED, line_count, now_ns, report, require_root, spawn, stop, testbed_down, testbed_up,
                      wait_event)

RESTARTS = max(3, int(os.environ.get("RESTARTS", "10")))
CRASHES = max(1, int(os.environ.get("CRASHES", "200")))


def sqlite(path, sql):
    return subprocess.run(["sqlite3", "-readonly", path, sql], check=True, capture_output=True,
                          text=True).stdout.strip()


def start_dj(lan, work, log):
    pid = spawn(lan, 1, log, BIN, "dj", "--name", "Persist", "--no-audio", "--json-events",
                "--state-dir", f"{work}/dj")
    wait_event(log, lambda e: e.get("event") == "station_published", timeout=20)
    return pid


def restart_bench(lan, work):
    back, outage = [], []
    dj_log = f"{work}/dj-restart.log"
    dj = start_dj(lan, work, dj_log)
    logs = [f"{work}/listen{host}.log" for host in (2, 3)]
    listeners = [spawn(lan, host, log, BIN, "listen", "Persist", "--no-audio", "--json-events", "--state-dir",
                       f"{work}/l{host}") for host, log in zip((2, 3), logs)]
    for log in logs:
        wait_event(log, lambda e: e.get("event") == "state")
    for run in range(RESTARTS):
        time.sleep(random.uniform(1.0, 2.0))
        marks = [line_count(log) for log in logs]
        killed = now_ns()
        stop(dj, "KILL")
        for log, mark in zip(logs, marks):
            wait_event(log, lambda e: e.get("event") == "station_silent", start=mark)
        started = now_ns()
        dj = start_dj(lan, work, dj_log)
        times = [wait_event(log, lambda e: e.get("event") == "station_back", start=mark, timeout=20)["time_ns"]
                 for log, mark in zip(logs, marks)]
        back.append((max(times) - started) / 1e6)
        outage.append((max(times) - killed) / 1e6)
    stop(dj)
    for pid in listeners:
        stop(pid, "INT")
    report("DJ restarted -> every listener hears it again", back)
    report("  kill -9 -> the same (restart included)", outage)


class Guest(threading.Thread):
    """Runs one guest command after another while `running` is set, keeping each acknowledgement."""

    def __init__(self, lan, work, host, role, kind, word):
        super().__init__(daemon=True)
        self.lan, self.work, self.host, self.role, self.kind, self.word = lan, work, host, role, kind, word
        self.running = threading.Event()
        self.idle = threading.Event()
        self.idle.set()
        self.acks, self.count, self.stopped = [], 0, False

    def run(self):
        while not self.stopped:
            if not self.running.wait(0.05):
                self.idle.set()
                continue
            self.idle.clear()
            self.count += 1
            args = [TESTBED, "run", self.lan, str(self.host), BIN, self.kind]
            text = f"{self.role} {self.count} {random.getrandbits(32):08x}"
            args += [self.word] if self.kind == "vote" else ["--as", self.role, text]
            args += ["--json", "--timeout", "2", "--station", "Persist", "--state-dir", f"{self.work}/{self.role}"]
            result = subprocess.run(args, capture_output=True, text=True)
            try:
                answer = json.loads(result.stdout)
            except ValueError:
                answer = None
            if answer and self.kind == "chat" and answer.get("delivered"):
                self.acks.append(text)
            if answer and self.kind == "vote" and answer.get("choice") == self.word:
                self.acks.append(answer["track_id"])
            if self.kind == "chat":
                time.sleep(2.1)  # the DJ's chat rate limit: 5 lines per 10 s per guest


def crash_bench(lan, work):
    database = f"{work}/dj/dj.sqlite"
    dj_log = f"{work}/dj-crash.log"
    guests = [Guest(lan, work, 2, "ann", "vote", "up"), Guest(lan, work, 3, "bob", "vote", "down"),
              Guest(lan, work, 2, "cid", "chat", None), Guest(lan, work, 3, "dee", "chat", None)]
    for guest in guests:
        guest.start()
    keys = {}
    checked_votes = skipped_votes = checked_lines = lost = broken = 0
    alive = []
    for run in range(CRASHES):
        dj = start_dj(lan, work, dj_log)
        for guest in guests:
            guest.acks.clear()
            guest.running.set()
        time.sleep(random.uniform(0.0, 2.0))
        stop(dj, "KILL")
        killed_at = time.monotonic()
        for guest in guests:
            guest.running.clear()
        for guest in guests:
            guest.idle.wait(10)
        alive.append(time.monotonic() - killed_at)
        verdict = sqlite(database, "PRAGMA integrity_check")
        if verdict != "ok":
            broken += 1
            print(f"run {run}: integrity_check: {verdict}")
        chat = sqlite(database, "SELECT json FROM station_books WHERE name = 'chat'")
        for guest in guests[2:]:
            for line in guest.acks:
                checked_lines += 1
                if line not in chat:
                    lost += 1
                    print(f"run {run}: lost chat line '{line}'")
        book = json.loads(sqlite(database, "SELECT json FROM station_books WHERE name = 'votes'") or "{}")
        pairs = book.get("votes", [])
        votes = dict(zip(pairs[0::2], pairs[1::2]))
        for guest, choice in ((guests[0], 1), (guests[1], 2)):
            if not guest.acks:
                continue
            if guest.acks[-1] != book.get("trackID"):
                skipped_votes += 1  # the track changed since: its votes were reset, as they should be
                continue
            checked_votes += 1
            # The voter's key: the one key in the book with its choice the first time it is seen alone.
            key = keys.get(guest.role)
            if key is None:
                candidates = [k for k, v in votes.items() if v == choice and k not in keys.values()]
                if len(candidates) == 1:
                    keys[guest.role] = key = candidates[0]
            if key is None or votes.get(key) != choice:
                lost += 1
                print(f"run {run}: {guest.role}'s acknowledged vote on {guest.acks[-1]} is not in the saved book")
    for guest in guests:
        guest.stopped = True
    acked = sum(g.count for g in guests)
    print(f"kill -9 at random moments: {CRASHES} runs, {acked} guest commands, "
          f"integrity_check failed {broken} times")
    print(f"  acknowledged chat lines checked {checked_lines}, votes checked {checked_votes} "
          f"(skipped {skipped_votes}: the track changed after the ack), lost {lost}")


def main():
    require_root()
    parts = sys.argv[1:] or ["restart", "crash"]
    work = tempfile.mkdtemp(prefix="partyradio-bench-persist-")
    lan = testbed_up(3)
    try:
        print(f"partyradio persistence benchmark: 3 namespace hosts, binary {BIN}")
        if "restart" in parts:
            restart_bench(lan, work)
        if "crash" in parts:
            crash_bench(lan, work)
    finally:
        testbed_down(lan)


if __name__ == "__main__":
    main()
