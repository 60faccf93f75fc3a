#!/usr/bin/env python3
"""Joins a multicast group on this host's eth0 address and writes every datagram it hears, one
line each: arrival CLOCK_REALTIME ns, a space, the datagram in hex. Run it on a testbed host only
(rule one: multicast never in the root namespace). Stops after SECONDS, or sooner at SIGTERM (a
test that has caught what it needs), writing what it heard either way.

usage: group_capture.py GROUP PORT LOCAL_ADDRESS SECONDS OUT
"""
import signal
import socket
import sys
import time

group, port, local, seconds, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
s.bind((group, port))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(group) + socket.inet_aton(local))
s.settimeout(0.2)
end = time.monotonic() + seconds


def stop(_signal, _frame):
    global end
    end = 0


signal.signal(signal.SIGTERM, stop)
count = 0
with open(out, "w") as f:
    print("ready", flush=True)
    while time.monotonic() < end:
        try:
            data = s.recv(2048)
        except socket.timeout:
            continue
        f.write("%d %s\n" % (time.time_ns(), data.hex()))
        count += 1
    f.flush()
print("done", count, flush=True)
