"""Hostile: reaches for the network through a module the scanner does not flag; exit 0 means it got out."""

from multiprocessing.connection import Client

for address in (("1.1.1.1", 443), ("pypi.org", 443)):
    Client(address).close()
    print(f"reached {address[0]}")
