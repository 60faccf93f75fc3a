#!/usr/bin/env python3
"""forged-flood — what a hostile guest's laptop sends: forged votes for a station, each from a
fresh made-up key with a made-up signature, so that checking one costs a full Ed25519
verification. Used by the attack tests and `make bench`; run it only inside a testbed host.

usage: forged-flood.py HOST PORT STATION_ID_HEX RATE_PER_S SECONDS
Prints the number of datagrams sent and the rate reached.
"""
import os
import socket
import struct
import sys
import time


def main():
    host, port, station, rate, seconds = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3]), \
        float(sys.argv[4]), float(sys.argv[5])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
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
                sock.sendto(pool[sent % len(pool)], (host, port))
            except OSError:
                pass
            sent += 1
    elapsed = time.monotonic() - start
    print(f"sent {sent} in {elapsed:.2f} s: {sent / elapsed:.0f} per second", flush=True)


if __name__ == "__main__":
    main()
