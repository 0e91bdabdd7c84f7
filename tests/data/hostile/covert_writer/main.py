"""Hostile, disguised: tries to write outside its output folder through paths built at run time.

Targets: the root, the input bundle, the service's own code, the folder around the output (the run's
workspace) and the home folders. It prints each write that worked, then fails with the first error it met.
"""

import argparse
import os
from pathlib import Path

args = argparse.ArgumentParser()
args.add_argument("--input")
args.add_argument("--output")
args.add_argument("--params")
given = args.parse_args()

marker = "tam" + "pered.txt"
targets = [Path(os.sep), Path(given.input), Path(__file__).parent, Path(given.output).parent,
           Path(os.path.expanduser("~r" + "oot")), Path(os.sep, "ho" + "me")]
errors = []
for folder in targets:
    try:
        Path(folder, marker).write_text("tam" + "pered")
        print("wrote into", folder)
    except OSError as error:
        errors.append(error)
if errors:
    raise errors[0]
