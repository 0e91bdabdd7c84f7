"""Hostile: starts several interpreters, each touching its share of memory and holding it; each stays below the
per-process limit, together they hold more than the step's budget. Prints "held" with the total when all do."""

import json
import subprocess
import sys

params = json.load(open(sys.argv[sys.argv.index("--params") + 1]))
count, each = params.get("processes", 4), params.get("mb_each", 900)
child = f"import sys\nhog = b'x' * ({each} << 20)\nprint('ready', flush=True)\nsys.stdin.read()\n"
children = [subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for _ in range(count)]
for process in children:
    if process.stdout.readline().strip() != "ready":
        sys.exit(f"a child died before holding its {each} MB")
print(f"held {count * each} MB", flush=True)
for process in children:
    process.stdin.close()
    process.wait()
