#!/usr/bin/env python3
"""Catches the live datagrams (kinds 23 and 24) a DJ at SOURCE sends by unicast to this host, on
eth0, writing each as a line (arrival CLOCK_REALTIME ns, a space, the datagram in hex) to OUT;
after 2 s it sends the listener they went to COUNT of each kind of bad input made from them:
replays (a caught datagram again, byte for byte), forgeries (a later sequence number and the
last byte of the signature changed: it no longer holds), truncated ones (the first 40 bytes)
and oversized ones (padded to 1300 bytes). Prints what it sent as JSON, then `done`. Run it on
a testbed host only (rule one). IPv4.

usage: live_tamper.py SOURCE SECONDS OUT COUNT
"""
import json
import socket
import struct
import sys
import time

source, seconds, out, count = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(3))
raw.bind(("eth0", 0))
raw.settimeout(0.1)
src = socket.inet_aton(source)
send = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
caught, target, sent = [], None, {}
start = time.monotonic()
end = start + seconds
print("ready", flush=True)
with open(out, "w") as f:
    while time.monotonic() < end:
        try:
            frame = raw.recv(65535)
        except socket.timeout:
            frame = b""
        if len(frame) > 42 and frame[12:14] == b"\x08\x00" and frame[23] == 17 and frame[26:30] == src:
            ihl = (frame[14] & 15) * 4
            udp = 14 + ihl
            payload = frame[udp + 8:]
            if payload[:3] == b"PR\x01" and payload[3] in (23, 24):
                f.write("%d %s\n" % (time.time_ns(), payload.hex()))
                caught.append(payload)
                target = (socket.inet_ntoa(frame[30:34]), struct.unpack("!H", frame[udp + 2:udp + 4])[0])
        if not sent and target and time.monotonic() - start >= 2 and len(caught) >= count:
            sent = {"replayed": 0, "forged": 0, "truncated": 0, "oversized": 0}
            for i, datagram in enumerate(caught[:count]):
                forged = bytearray(datagram)
                forged[44:52] = struct.pack(">Q", time.time_ns() + 10_000_000_000 + i)
                forged[-1] ^= 0x5A
                for name, bad in (("replayed", datagram), ("forged", bytes(forged)), ("truncated", datagram[:40]),
                                  ("oversized", datagram + bytes(1300 - len(datagram)))):
                    send.sendto(bad, target)
                    sent[name] += 1
                time.sleep(0.005)
print(json.dumps({"sent": sent, "target": target}), flush=True)
print("done", len(caught), flush=True)
