"""Objects the preemption service's tests share."""

from __future__ import annotations

from shared.model import Pod
from tests.unit.events.samples import make_pod as sample_pod


def make_pod(name: str, *, cpu: str, priority: int, node_name: str = "") -> Pod:
    """A pod of the default scheduler (the sample pod leaves its scheduler unset)."""
    return sample_pod(name, cpu=cpu, priority=priority, node_name=node_name, scheduler_name="default-scheduler")
