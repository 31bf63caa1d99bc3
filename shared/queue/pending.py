"""A snapshot of what waits where, for metrics (`scheduler_pending_pods{queue=...}`) and debugging."""

from __future__ import annotations

from shared.framework.pod_info import PodInfo

from .queued_pod_info import QueuedPodInfo


class PendingPods:
    __slots__ = ("active", "backoff", "unschedulable", "gated")

    def __init__(self, active: list[QueuedPodInfo], backoff: list[QueuedPodInfo],
                 unschedulable: list[QueuedPodInfo], gated: list[QueuedPodInfo]) -> None:
        self.active = active
        self.backoff = backoff
        self.unschedulable = unschedulable
        self.gated = gated

    def counts(self) -> dict[str, int]:
        """Keyed by the `queue` label values of scheduler_pending_pods."""
        return {"active": len(self.active), "backoff": len(self.backoff),
                "unschedulable": len(self.unschedulable), "gated": len(self.gated)}

    def pods(self) -> list[PodInfo]:
        return [q.pod_info for q in (*self.active, *self.backoff, *self.unschedulable, *self.gated)]

    def summary(self) -> str:
        """Upstream's PendingPods debugging line (gated pods count as unschedulable there)."""
        return (f"activeQ:{len(self.active)}; backoffQ:{len(self.backoff)}; "
                f"unschedulablePods:{len(self.unschedulable) + len(self.gated)}")

    def __len__(self) -> int:
        return len(self.active) + len(self.backoff) + len(self.unschedulable) + len(self.gated)


__all__ = ["PendingPods"]
