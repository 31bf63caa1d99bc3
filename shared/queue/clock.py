"""Time as the queue sees it: an injected `Clock`, so backoff and flush timing are reproducible.

The pure core never reads the wall clock itself; services hand it a `MonotonicClock`, tests and
the simulator a `FakeClock` they advance explicitly.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since an arbitrary, fixed origin."""
        ...


class FakeClock:
    """A clock that moves only when told to."""

    __slots__ = ("_now",)

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock cannot go backwards")
        self._now += seconds

    def set(self, t: float) -> None:
        if t < self._now:
            raise ValueError("a clock cannot go backwards")
        self._now = float(t)


class MonotonicClock:
    """The host's monotonic clock, for services (never used by the pure core on its own)."""

    __slots__ = ()

    def now(self) -> float:
        return time.monotonic()


__all__ = ["Clock", "FakeClock", "MonotonicClock"]
