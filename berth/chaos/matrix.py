"""The fault matrix: what was killed, when, how long until it was back and the cluster bound pods
again, and the binding rate on either side. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class FaultRecord:
    target: str
    at_s: float
    """When it was killed, seconds after the first pod was submitted."""
    back_s: float | None
    """Until the supervisor had it running again (None: it never came back)."""
    binding_s: float | None
    """Until the cluster bound a pod again (None: no pod was bound afterwards)."""
    before: float
    """Pods bound per second in the window before the kill."""
    after: float | None
    """Pods bound per second in the window after binding resumed."""


def rate(samples: Sequence[tuple[float, int]], start: float, end: float) -> float:
    """Pods bound per second between `start` and `end`, from (time, bound count) samples."""
    if end <= start:
        return 0.0
    first = _at(samples, start)
    last = _at(samples, end)
    return (last - first) / (end - start)


def _at(samples: Sequence[tuple[float, int]], t: float) -> int:
    """The bound count last sampled at or before `t` (0 before the first sample)."""
    count = 0
    for at, bound in samples:
        if at > t:
            break
        count = bound
    return count


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f}"


def _per_s(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


HEADER = ("killed", "at (s)", "back after (s)", "binding again after (s)", "pods/s before", "pods/s after")


def rows(records: Sequence[FaultRecord]) -> list[tuple[str, ...]]:
    return [(r.target, f"{r.at_s:.1f}", _seconds(r.back_s), _seconds(r.binding_s), _per_s(r.before), _per_s(r.after))
            for r in records]


def text_table(records: Sequence[FaultRecord]) -> str:
    table = [HEADER, *rows(records)]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table)


def markdown_table(records: Sequence[FaultRecord]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join(" --- " for _ in HEADER) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows(records)]
    return "\n".join(lines)
