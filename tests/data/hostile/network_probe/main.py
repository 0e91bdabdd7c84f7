"""Hostile: tries to reach the network by IP and by DNS name; exit 0 means it got out."""

import socket

for host in ("1.1.1.1", "pypi.org"):
    socket.create_connection((host, 443), timeout=5).close()
    print(f"reached {host}")
