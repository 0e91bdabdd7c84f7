"""The data roots: the only folders a dataset named from outside the local CLI is read from.

Whoever may trigger a DAG (Airflow's ``user`` role, an upstream system's token) or use the Build page names the
dataset by path, and a worker then reads it, copies it into a workspace and may quote it in an error: without a
limit, that is a way to read any file the server can. So such a path must resolve, symbolic links followed, to a
regular file inside ``DAGSMITH_HOME/datasets`` (where uploads go) or a folder listed in ``DAGSMITH_DATA_ROOTS``.
The decision takes only the path and ``stat``: the file is never opened, so a refusal cannot quote a byte of it
and a FIFO cannot block it. The local CLI's own runs are exempt (``Settings.local_cli``): its user may read any
file they can anyway.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from urllib.parse import unquote, urlsplit

from dagsmith.config import DATA_ROOTS_VARIABLE, Settings
from dagsmith.data.sniffing import DatasetError


class DatasetRefused(DatasetError):
    """A dataset path outside the data roots, missing, or not a regular file; the message says where datasets may
    live and quotes nothing of the file."""


def data_roots(settings: Settings) -> list[Path]:
    """``DAGSMITH_HOME/datasets`` and the folders in ``DAGSMITH_DATA_ROOTS``, resolved."""
    return [(settings.home / "datasets").resolve(), *settings.extra_data_roots]


def confine(given: str | Path, settings: Settings) -> Path:
    """The resolved path of ``given`` (a path or ``file://`` URI) when it is a regular file inside a data root;
    raises ``DatasetRefused`` otherwise."""
    text, roots = str(given).strip(), data_roots(settings)
    if not text:
        raise DatasetRefused(f"no dataset was named. {_where(roots)}")
    try:
        path = _local_path(text).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, an unknown ~user, a NUL byte
        raise DatasetRefused(f"the dataset path {text} cannot be resolved. {_where(roots)}") from None
    if not any(path.is_relative_to(root) for root in roots):  # checked first: no hint whether an outside file exists
        raise DatasetRefused(f"the dataset {text} is outside the data folders this deployment reads datasets from "
                             f"(symbolic links followed). {_where(roots)}")
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise DatasetRefused(f"the dataset {text} does not exist") from None
    except OSError as exc:
        raise DatasetRefused(f"the dataset {text} cannot be read: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise DatasetRefused(f"the dataset {text} is not a regular file (a folder, device, pipe or socket); name "
                             "a data file")
    return path


def confine_output(given: str | Path, settings: Settings) -> Path:
    """The resolved path of a file to write (``given``): in an existing folder inside a data root, and no folder,
    link or special file already; raises ``DatasetRefused`` otherwise."""
    text, roots = str(given).strip(), data_roots(settings)
    try:
        path = _local_path(text).expanduser()
        folder = path.parent.resolve()
    except (OSError, RuntimeError, ValueError):
        raise DatasetRefused(f"the output path {text} cannot be resolved. {_where(roots)}") from None
    if not text or not any(folder.is_relative_to(root) for root in roots):
        raise DatasetRefused(f"the output {text or '(none)'} is outside the data folders this deployment writes to. "
                             f"{_where(roots)}")
    if not folder.is_dir():
        raise DatasetRefused(f"the output's folder {folder} does not exist")
    target = folder / path.name
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise DatasetRefused(f"the output {text} is a link, folder or special file; name a new file")
    return target


def _local_path(text: str) -> Path:
    if not text.startswith("file:"):
        return Path(text)
    uri = urlsplit(text)
    if uri.netloc not in ("", "localhost"):
        raise ValueError("a file:// URI of another host")
    return Path(unquote(uri.path))


def _where(roots: list[Path]) -> str:
    return (f"Datasets are read from {', '.join(str(root) for root in roots)} only: put the file there (or upload "
            f"it on the Build page), or have the deployment's operator add its folder to {DATA_ROOTS_VARIABLE} "
            f"(folders separated by '{os.pathsep}').")
