"""What `berth simulate` reports per pod (the JSON shape is a contract outside tools rely on)."""

from __future__ import annotations

from typing import Literal

import msgspec

Phase = Literal["Bound", "Pending", "Deleted"]


class PodOutcome(msgspec.Struct, kw_only=True):
    namespace: str
    name: str
    phase: Phase
    nodeName: str | None = None
    nominatedNodeName: str | None = None
    message: str | None = None
    preemptedBy: str | None = None
    priority: int = 0
    attempts: int = 0


class SimulationReport(msgspec.Struct, kw_only=True):
    pods: list[PodOutcome]
    seed: int = 0
    cycles: int = 0
