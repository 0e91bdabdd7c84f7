"""The machine's live processes, as tests look for what a run started or left behind."""

from __future__ import annotations

from pathlib import Path


def command_line(pid: int) -> str | None:
    """The process's command line, its arguments joined by spaces; None once it has ended."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def processes_naming(text: str) -> dict[int, str]:
    """Live processes whose command line mentions ``text``: their pids and command lines."""
    lines = {int(path.name): command_line(int(path.name)) for path in Path("/proc").glob("[0-9]*")}
    return {pid: line for pid, line in lines.items() if line is not None and text in line}
