"""Waiting on a condition instead of sleeping a fixed time: short pauses first, so a fast outcome costs little."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(check: Callable[[], T], *, timeout: float, what: str | Callable[[], str],
               first: float = 0.2, longest: float = 3.0) -> T:
    """The first truthy value ``check`` returns, polled with pauses growing from ``first`` to ``longest`` seconds.

    At the deadline it fails saying ``what`` was awaited (a callable builds the message then, with the state it
    found).
    """
    deadline, pause = time.monotonic() + timeout, first
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() + pause > deadline:
            raise AssertionError(f"after {timeout:g} s, still waiting for {what() if callable(what) else what}")
        time.sleep(pause)
        pause = min(longest, pause * 1.5)
