"""Files that readers in other processes may open at any moment: written whole or not at all."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file of this writer's own, renamed over it: a reader sees the
    old file or the new one, never half of one, and writers of the same file at once do not take each other's
    temporary file away."""
    partial = path.with_suffix(f".{secrets.token_hex(4)}.tmp")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
