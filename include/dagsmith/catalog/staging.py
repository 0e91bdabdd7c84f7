"""Staging: an upload is copied into a private folder and checked there, never read in place.

Staging refuses what must not be read at all (links, binary files, anything over the size limits) before
a byte of it is loaded, so a huge or hostile folder costs nothing. The staged copy is removed afterwards:
the database keeps the files of accepted versions.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dagsmith.catalog.source import ServiceSource
from dagsmith.catalog.validation import MAX_FILES, size_findings
from dagsmith.models.catalog import Finding


class StagingRejected(Exception):
    def __init__(self, findings: list[Finding]):
        super().__init__("; ".join(str(f) for f in findings))
        self.findings = findings


def _inventory(folder: Path) -> tuple[dict[str, int], list[Finding]]:
    sizes: dict[str, int] = {}
    findings: list[Finding] = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if any(part.startswith(".") or part == "__pycache__" for part in parts):
            continue
        relative = "/".join(parts)
        if path.is_symlink():
            findings.append(Finding(check="structure", file=relative, message="symbolic links are not accepted"))
        elif path.is_file():
            sizes[relative] = path.stat().st_size
            if len(sizes) > MAX_FILES:
                break
    return sizes, findings


@contextmanager
def staged(path: str | Path, staging_root: Path) -> Iterator[ServiceSource]:
    """Copy the upload at ``path`` into ``staging_root`` and yield it read as text; clean up afterwards."""
    folder = Path(path)
    if not folder.is_dir():
        raise StagingRejected([Finding(check="structure", message=f"{folder} is not a folder")])
    sizes, findings = _inventory(folder)
    findings += size_findings(sizes)
    if findings:
        raise StagingRejected(findings)
    target = staging_root / uuid.uuid4().hex
    target.mkdir(parents=True)
    try:
        files: dict[str, str] = {}
        for relative in sizes:
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / relative, target / relative)
            try:
                files[relative] = (target / relative).read_text(encoding="utf-8")
            except UnicodeDecodeError:
                findings.append(Finding(check="structure", file=relative, message="not a UTF-8 text file"))
        if findings:
            raise StagingRejected(findings)
        yield ServiceSource(files, str(folder.resolve()))
    finally:
        shutil.rmtree(target, ignore_errors=True)
