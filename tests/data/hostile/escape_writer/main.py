"""Hostile: writes to params["path"]; exit 0 means the write landed."""

import argparse
import json

args = argparse.ArgumentParser()
args.add_argument("--input")
args.add_argument("--output")
args.add_argument("--params")
params = json.loads(open(args.parse_args().params).read())
with open(params.get("path", "/escape.txt"), "w") as handle:
    handle.write("escaped")
print("wrote", params.get("path"))
