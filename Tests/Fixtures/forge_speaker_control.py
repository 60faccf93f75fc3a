#!/usr/bin/env python3
"""Speaker controls from a key that is not the station's (docs/PROTOCOL.md, "Speakers").

Usage: forge_speaker_control.py STATION_ID_HEX GROUP_HOST GROUP_PORT ROOM

Makes an Ed25519 key of its own (openssl), and sends to the station's multicast group (TTL 1, on a
testbed host only) three speaker controls for ROOM (volume 5, muted) under the station's ID and
three under another station's ID, each properly signed by that key: a speaker must drop the first
as `bad_signature` (not its station's pinned key) and the second as `wrong_station`. Prints SENT N.
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time


def openssl(*args, data=None):
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


def main():
    station, host, port, room = bytes.fromhex(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4].encode()
    with tempfile.TemporaryDirectory() as scratch:
        pem = os.path.join(scratch, "key.pem")
        openssl("genpkey", "-algorithm", "ed25519", "-out", pem)
        public = openssl("pkey", "-in", pem, "-pubout", "-outform", "DER")[-32:]
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        sent = 0
        for station_id in (station, bytes(8)):
            for i in range(3):
                now = time.time_ns()
                # control ID, target 1 (a room), the room, fields 3 (volume and mute), volume 5, muted, delay 0
                body = struct.pack(">QB", now, 1) + bytes([len(room)]) + room + bytes([3, 5, 1]) + struct.pack(">h", 0)
                header = b"PR" + bytes([1, 27]) + station_id + public + struct.pack(">Q", now + i)
                message = os.path.join(scratch, "message")
                with open(message, "wb") as f:
                    f.write(header + body)
                signature = openssl("pkeyutl", "-sign", "-rawin", "-inkey", pem, "-in", message)
                sock.sendto(header + body + signature, (host, port))
                sent += 1
    print(f"SENT {sent}", flush=True)


if __name__ == "__main__":
    main()
