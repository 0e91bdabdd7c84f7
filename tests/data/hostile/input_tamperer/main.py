"""Hostile: writes into its input bundle (poisoning the data of the steps before it), then at the root."""

import argparse
from pathlib import Path

args = argparse.ArgumentParser()
args.add_argument("--input")
args.add_argument("--output")
args.add_argument("--params")
given = args.parse_args()
for folder in (Path(given.input), Path("/")):
    (folder / "tampered.txt").write_text("tampered")
    print("wrote into", folder)
