"""When to kill what: a seeded schedule. Pure."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

TARGETS: tuple[str, ...] = ("queue", "filter", "binder", "projector", "preemption", "gateway", "tansu", "postgres")
"""Every kind of process of the cluster, the embedded broker and database included."""


def members_of(kinds: Sequence[str], labels: Sequence[str]) -> tuple[str, ...]:
    """The running processes of each kind, kind by kind, each kind's in index order: `queue`,
    `queue-1`, ... where queues share the pods, `filter`, `filter-1`, ... for the workers."""
    def index(label: str, kind: str) -> int | None:
        if label == kind:
            return 0
        rest = label.removeprefix(kind + "-")
        return int(rest) if rest != label and rest.isdigit() else None

    out: list[str] = []
    for kind in kinds:
        found = sorted((i, label) for label in labels if (i := index(label, kind)) is not None)
        out += [label for _, label in found]
    return tuple(out)


@dataclass(frozen=True)
class Fault:
    at_s: float
    """Seconds after the first pod was submitted."""
    target: str


def fault_plan(seed: int, targets: Sequence[str], count: int, window_s: float, *, spacing_s: float = 8.0,
               lead_s: float = 2.0) -> list[Fault]:
    """`count` kills within [lead_s, lead_s + window_s), each target in turn (in a seeded order, so
    every target is hit once before any is hit twice), at seeded moments at least `spacing_s`
    apart (a fault lands on a cluster that has recovered from the one before, when it can). The
    spacing comes first: where the window cannot hold `count` faults so spaced, the last ones land
    after it, on a cluster no longer sent pods, whose recovery is still checked."""
    if count <= 0 or not targets:
        return []
    rng = random.Random(seed)
    order: list[str] = []
    while len(order) < count:
        batch = list(targets)
        rng.shuffle(batch)
        order += batch
    slots = max(window_s - spacing_s * (count - 1), 0.0)
    offsets = sorted(rng.uniform(0, slots) for _ in range(count))
    return [Fault(round(lead_s + offset + i * spacing_s, 3), target)
            for i, (offset, target) in enumerate(zip(offsets, order))]
