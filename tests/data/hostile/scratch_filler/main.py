"""Hostile: fills its private /dev/shm and /tmp (both in memory) with ``mb_each`` MB each, in files of 8 MB,
then prints "filled"."""

import json
import sys

params = json.load(open(sys.argv[sys.argv.index("--params") + 1]))
each = params.get("mb_each", 1800)
chunk = b"x" * (1 << 20)
for folder in ("/dev/shm", "/tmp"):
    for number in range(each // 8):
        with open(f"{folder}/filler-{number}", "wb") as sink:
            for _ in range(8):
                sink.write(chunk)
print(f"filled {2 * each} MB", flush=True)
