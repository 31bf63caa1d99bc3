"""The fault matrix: what was killed, when, how long until it ran again, the longest time the
cluster bound nothing while pods waited, and the binding rate on either side. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Sample = tuple[float, int, int]
"""(seconds since the first pod was applied, pods bound, pods known) as the read model had them."""


@dataclass(frozen=True)
class FaultRecord:
    target: str
    at_s: float
    """When it was killed, seconds after the first pod was applied."""
    back_s: float | None
    """Until the supervisor had it running again (None: it never came back)."""
    stall_s: float | None
    """The longest the cluster bound no pod while pods waited, from the kill to the next fault
    (None: binding never resumed)."""
    before: float
    """Pods bound per second in the window before the kill."""
    after: float | None
    """Pods bound per second in the window after the stall ended."""


def rate(samples: Sequence[Sample], start: float, end: float) -> float:
    """Pods bound per second between `start` and `end`."""
    if end <= start:
        return 0.0
    return (_bound_at(samples, end) - _bound_at(samples, start)) / (end - start)


def _bound_at(samples: Sequence[Sample], t: float) -> int:
    """The bound count last sampled at or before `t` (0 before the first sample)."""
    count = 0
    for at, bound, _ in samples:
        if at > t:
            break
        count = bound
    return count


def longest_stall(samples: Sequence[Sample], start: float, end: float) -> tuple[float, float | None]:
    """The longest stretch that began within [start, end] in which no pod was bound while some
    waited, and when binding resumed after it (a stretch still running at `end` is followed past
    it); (its length to the last sample, None) when binding never resumed."""
    bound = _bound_at(samples, start)
    since = start
    longest, resumed = 0.0, start
    waiting = False
    for at, now_bound, known in samples:
        if at <= start:
            waiting = bound < known
            continue
        if at > end and not (waiting and since <= end):
            break
        if now_bound > bound:
            if waiting and at - since > longest:
                longest, resumed = at - since, at
            bound, since = now_bound, at
            if at > end:
                break
        elif not waiting:
            since = at  # nothing to bind: idle, not stalled
        waiting = now_bound < known
    else:
        if waiting and samples and samples[-1][0] - since > longest:
            return samples[-1][0] - since, None
    return longest, resumed


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f}"


def _per_s(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


HEADER = ("killed", "at (s)", "running again after (s)", "longest stall (s)", "pods/s before", "pods/s after")


def rows(records: Sequence[FaultRecord]) -> list[tuple[str, ...]]:
    return [(r.target, f"{r.at_s:.1f}", _seconds(r.back_s), _seconds(r.stall_s), _per_s(r.before), _per_s(r.after))
            for r in records]


def text_table(records: Sequence[FaultRecord]) -> str:
    table = [HEADER, *rows(records)]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table)


def markdown_table(records: Sequence[FaultRecord]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join(" --- " for _ in HEADER) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows(records)]
    return "\n".join(lines)
