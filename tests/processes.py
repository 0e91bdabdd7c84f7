"""The machine's live processes, as tests look for what a run started or left behind."""

from __future__ import annotations

from pathlib import Path


def processes_naming(text: str) -> dict[int, str]:
    """Live processes whose command line mentions ``text``: their pids and command lines."""
    found = {}
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            line = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # it ended meanwhile
            continue
        if text in line:
            found[int(cmdline.parent.name)] = line
    return found
