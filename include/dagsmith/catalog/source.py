"""A microservice folder as files in memory: manifest, code, requirements, and its content hash."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import yaml

from dagsmith.errors import InputError
from dagsmith.models.catalog import Manifest

MANIFEST = "manifest.yaml"
ENTRYPOINT = "main.py"
REQUIREMENTS = "requirements.txt"
REQUIRED_FILES = (MANIFEST, ENTRYPOINT, REQUIREMENTS)


class ManifestError(InputError, ValueError):
    """The manifest cannot be read as a mapping with at least a name."""


@dataclass(frozen=True)
class ServiceSource:
    """The text files of one microservice, keyed by their path inside the folder."""

    files: dict[str, str]
    origin: str

    @cached_property
    def content_hash(self) -> str:
        digest = hashlib.sha256()
        for name in sorted(self.files):
            digest.update(name.encode() + b"\0" + self.files[name].encode() + b"\0")
        return digest.hexdigest()

    @property
    def code(self) -> str:
        return self.files.get(ENTRYPOINT, "")

    @property
    def size_bytes(self) -> int:
        return sum(len(text.encode()) for text in self.files.values())

    @cached_property
    def raw_manifest(self) -> dict:
        try:
            data = yaml.safe_load(self.files.get(MANIFEST, "")) or {}
        except yaml.YAMLError as exc:
            raise ManifestError(f"{MANIFEST} is not valid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise ManifestError(f"{MANIFEST} must be a mapping of keys to values")
        return data

    @cached_property
    def manifest(self) -> Manifest:
        data = dict(self.raw_manifest)
        if not str(data.get("name") or "").strip():
            raise ManifestError(f"{MANIFEST} has no name")
        keywords = data.get("keywords") or []
        if isinstance(keywords, str):
            keywords = [k.strip() for k in keywords.split(",") if k.strip()]
        return Manifest(
            name=str(data["name"]).strip(),
            description=str(data.get("description") or "").strip(),
            category=str(data.get("category") or "").strip().lower(),
            keywords=[str(k) for k in keywords],
            python_version=str(data.get("python_version") or ""),
            author=str(data.get("author") or ""),
        )

    @property
    def requirements(self) -> list[str]:
        lines = (line.split("#", 1)[0].strip() for line in self.files.get(REQUIREMENTS, "").splitlines())
        return [line for line in lines if line]

    @classmethod
    def from_files(cls, files: dict[str, str], origin: str = "") -> ServiceSource:
        return cls(dict(files), origin)

    @classmethod
    def read(cls, folder: Path) -> ServiceSource:
        """Read every text file of an already staged (size-checked) folder."""
        files = {
            str(path.relative_to(folder)): path.read_text(encoding="utf-8")
            for path in sorted(folder.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
        }
        return cls(files, str(folder))
