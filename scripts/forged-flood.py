#!/usr/bin/env python3
"""forged-flood — what a hostile guest's laptop sends: forged votes for a station, each from a
fresh made-up key with a made-up signature, so that checking one costs a full Ed25519
verification. Used by the attack tests and `make bench`; run it only inside a testbed host.

usage: forged-flood.py HOST PORT STATION_ID_HEX RATE_PER_S SECONDS [FIRST_SOURCE+COUNT]
With FIRST_SOURCE+COUNT (e.g. 10.99.12.100+64) the datagrams go out in turn from COUNT consecutive
source addresses, which must be the host's own (aliases: `ip addr add`), as one machine with many
addresses would send them. Prints the number of datagrams sent and the rate reached.
"""
import ipaddress
import os
import socket
import struct
import sys
import time


def main():
    host, port, station, rate, seconds = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3]), \
        float(sys.argv[4]), float(sys.argv[5])
    sources = []
    if len(sys.argv) > 6:
        first, count = sys.argv[6].split("+")
        sources = [str(ipaddress.ip_address(first) + i) for i in range(int(count))]
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    socks = []
    for source in sources or [None]:
        sock = socket.socket(family, socket.SOCK_DGRAM)
        if source:
            sock.bind((source, 0))
        socks.append(sock)
    body = bytes([2]) + b"t0" + bytes([1])  # vote: track "t0", up
    pool = [b"PR\x01\x05" + station + os.urandom(32) + struct.pack(">Q", n) + body + os.urandom(64)
            for n in range(4096)]
    sent = 0
    start = time.monotonic()
    end = start + seconds
    while True:
        now = time.monotonic()
        if now >= end:
            break
        due = int((now - start) * rate)
        while sent < due:
            try:
                socks[sent % len(socks)].sendto(pool[sent % len(pool)], (host, port))
            except OSError:
                pass
            sent += 1
    elapsed = time.monotonic() - start
    print(f"sent {sent} in {elapsed:.2f} s: {sent / elapsed:.0f} per second", flush=True)


if __name__ == "__main__":
    main()
