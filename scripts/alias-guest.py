#!/usr/bin/env python3
"""alias-guest — what a hostile guest's laptop with many addresses on one interface sends: real,
signed guest datagrams, each from a fresh Ed25519 key, spread over the machine's alias addresses.
Used by the attack tests (Tests/IntegrationTests/MachineLANTests.swift); run it only inside a
testbed host. Needs python3-cryptography.

usage:
  alias-guest.py vote HOST PORT STATION_HEX TRACK_ID up|down ALIAS...
      one vote from each alias, each with a fresh key, resent every 0.2 s until the DJ answers
      (at most 4 s)
  alias-guest.py chat HOST PORT STATION_HEX COUNT NAME SECONDS ALIAS...
      COUNT chat lines, each from a fresh key, spread over the aliases and over SECONDS, each resent
      every 0.2 s until answered (at most 3 s after the last went)
  alias-guest.py web URL COUNT ALIAS...
      COUNT chat posts to the DJ's page, without a cookie, spread over the aliases
  alias-guest.py listen HOST PORT STATION_HEX SECONDS ALIAS...
      a listener from each alias, each with a fresh key, saying hello every second for SECONDS
Prints one JSON object: how many answers of each status, and how many got none.
"""
import json
import os
import select
import socket
import struct
import sys
import time
import urllib.parse
import http.client

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization

HELLO, VOTE, VOTE_ACK, CHAT_SEND, CHAT_ACK = 2, 5, 6, 13, 14
VOTE_STATUS = {0: "counted", 1: "stale_track", 2: "no_track", 3: "address_limit"}
CHAT_STATUS = {0: "delivered", 1: "duplicate", 2: "rate_limited", 3: "muted", 4: "rejected", 5: "stale"}


def string(text):
    data = text.encode()
    return bytes([len(data)]) + data


class Guest:
    """A fresh key, and a socket bound to one alias."""

    def __init__(self, alias, station):
        self.key = Ed25519PrivateKey.generate()
        self.public = self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.station = station
        self.sock = socket.socket(socket.AF_INET6 if ":" in alias else socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((alias, 0))
        self.sock.setblocking(False)

    def datagram(self, kind, body):
        header = b"PR\x01" + bytes([kind]) + self.station + self.public + struct.pack(">Q", time.time_ns())
        return header + body + self.key.sign(header + body)


def exchange(guests, target, bodies, kind, ack_kind, statuses, until):
    """Sends each guest's body, again every 0.2 s until its ack comes or `until`; returns the statuses."""
    answers = {}
    last_sent = {}
    pending = {index: guest for index, guest in enumerate(guests)}
    while pending and time.monotonic() < until:
        now = time.monotonic()
        for index, guest in pending.items():
            due = bodies[index][0]
            if now >= due and now - last_sent.get(index, -1) >= 0.2:
                guest.sock.sendto(guest.datagram(kind, bodies[index][1]), target)
                last_sent[index] = now
        readable, _, _ = select.select([g.sock for g in pending.values()], [], [], 0.01)
        for sock in readable:
            index = next(i for i, g in pending.items() if g.sock is sock)
            while True:
                try:
                    data = sock.recv(2048)
                except BlockingIOError:
                    break
                # An empty datagram is the DJ asking the kernel to resolve this address: ignore it.
                if len(data) > 52 + 9 and data[3] == ack_kind:
                    answers[index] = statuses.get(data[52 + 8], "unknown")
            if index in answers:
                pending.pop(index).sock.close()
    counts = {}
    for status in answers.values():
        counts[status] = counts.get(status, 0) + 1
    counts["unanswered"] = len(guests) - len(answers)
    return counts


def main():
    mode = sys.argv[1]
    start = time.monotonic()
    if mode == "vote":
        host, port, station, track, choice = sys.argv[2], int(sys.argv[3]), bytes.fromhex(sys.argv[4]), \
            sys.argv[5], sys.argv[6]
        aliases = sys.argv[7:]
        guests = [Guest(alias, station) for alias in aliases]
        body = string(track) + bytes([1 if choice == "up" else 2])
        counts = exchange(guests, (host, port), [(start, body)] * len(guests), VOTE, VOTE_ACK, VOTE_STATUS,
                          start + 4)
    elif mode == "chat":
        host, port, station, count, name, seconds = sys.argv[2], int(sys.argv[3]), bytes.fromhex(sys.argv[4]), \
            int(sys.argv[5]), sys.argv[6], float(sys.argv[7])
        aliases = sys.argv[8:]
        guests = [Guest(aliases[n % len(aliases)], station) for n in range(count)]
        bodies = []
        for n in range(count):
            text = f"spam line {n}".encode()
            body = struct.pack(">Q", n + 1) + string(name) + struct.pack(">H", len(text)) + text
            bodies.append((start + seconds * n / count, body))
        counts = exchange(guests, (host, port), bodies, CHAT_SEND, CHAT_ACK, CHAT_STATUS, start + seconds + 3)
    elif mode == "listen":
        host, port, station, seconds = sys.argv[2], int(sys.argv[3]), bytes.fromhex(sys.argv[4]), float(sys.argv[5])
        guests = [Guest(alias, station) for alias in sys.argv[6:]]
        counts = {"hellos": 0}
        while time.monotonic() < start + seconds:
            for n, guest in enumerate(guests):
                guest.sock.sendto(guest.datagram(HELLO, string(f"fresh {n}")), (host, port))
                counts["hellos"] += 1
            time.sleep(1)
            for guest in guests:  # snapshots and empty datagrams back: not read
                try:
                    while guest.sock.recv(2048):
                        pass
                except BlockingIOError:
                    pass
    elif mode == "web":
        url, count = urllib.parse.urlsplit(sys.argv[2]), int(sys.argv[3])
        aliases = sys.argv[4:]
        counts = {}
        for n in range(count):
            connection = http.client.HTTPConnection(url.hostname, url.port, timeout=12,
                                                    source_address=(aliases[n % len(aliases)], 0))
            origin = f"http://{url.hostname}:{url.port}"
            connection.request("POST", "/api/chat", body=f"text=web+spam+{n}",
                               headers={"Origin": origin, "Content-Type": "application/x-www-form-urlencoded"})
            reply = connection.getresponse()
            answer = reply.read()
            try:
                status = json.loads(answer).get("status", str(reply.status))
            except ValueError:
                status = str(reply.status)
            counts[status] = counts.get(status, 0) + 1
            connection.close()
    else:
        sys.exit(__doc__)
    counts["seconds"] = round(time.monotonic() - start, 2)
    print(json.dumps(counts, sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
