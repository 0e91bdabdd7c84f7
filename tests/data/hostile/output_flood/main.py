"""Hostile: writes ``total_mb`` MB into its output folder, in files of ``file_mb`` MB (or ``files`` empty
files), then prints "wrote"."""

import json
import sys

params = json.load(open(sys.argv[sys.argv.index("--params") + 1]))
chunk = b"x" * (1 << 20)
for number in range(params.get("files", 0)):
    open(f"/output/empty-{number}", "wb").close()
total, size = params.get("total_mb", 0), params.get("file_mb", 1)
for number in range(total // size):
    with open(f"/output/flood-{number}.bin", "wb") as sink:
        for _ in range(size):
            sink.write(chunk)
print("wrote", flush=True)
