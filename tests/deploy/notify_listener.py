#!/usr/bin/env python3
"""A stand-in for systemd's notification socket: binds a unix datagram socket at PATH and
appends every message (one per line, newlines inside shown as '|') to LOG until killed."""
import os
import socket
import sys

path, log = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    os.unlink(path)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
with open(log, "a", buffering=1, encoding="utf-8") as out:
    while True:
        data = sock.recv(65536)
        out.write(data.decode("utf-8", "replace").strip().replace("\n", "|") + "\n")
