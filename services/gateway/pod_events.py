"""A pod's scheduling history as the Kubernetes events kube-scheduler would have recorded for it.

Only upstream's reasons, with upstream's wording:
  Warning FailedScheduling  <the attempt's FitError message>
  Warning FailedScheduling  running Bind plugin "DefaultBinder": <why the binder refused>
  Normal  Scheduled         Successfully assigned <ns>/<name> to <node>
  Normal  Preempted         Preempted by pod <preemptor uid> on node <node>
Identical events are folded into one with a count and first/last timestamps, as the API server's
event correlator does, so `berth describe` can print kubectl's "(x3 over 2m)".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from shared.binding.state import POD_DELETED
from shared.projection import AttemptRow, BindingRow, PodRow

DEFAULT_SCHEDULER = "default-scheduler"


@dataclass
class _Event:
    type: str
    reason: str
    source: str
    message: str
    first: datetime
    last: datetime
    count: int = 1

    def render(self) -> dict[str, Any]:
        return {"type": self.type, "reason": self.reason, "from": self.source, "message": self.message,
                "count": self.count, "firstTimestamp": self.first.isoformat(), "lastTimestamp": self.last.isoformat()}


def core_events(row: PodRow, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same events as core v1 Event objects about the pod (what `kubectl describe pod` lists),
    each named as the API server's recorder names one: the pod's name and a unique suffix."""
    involved = {"kind": "Pod", "namespace": row.namespace, "name": row.name, "uid": row.uid, "apiVersion": "v1"}
    out = []
    for i, e in enumerate(events):
        out.append({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{row.name}.{row.uid[:8]}{i:04x}", "namespace": row.namespace,
                         "creationTimestamp": _stamp(e["firstTimestamp"])},
            "involvedObject": involved, "reason": e["reason"], "message": e["message"], "type": e["type"],
            "source": {"component": e["from"]}, "reportingComponent": e["from"], "reportingInstance": "",
            "firstTimestamp": _stamp(e["firstTimestamp"]), "lastTimestamp": _stamp(e["lastTimestamp"]),
            "count": e["count"],
        })
    return out


def _stamp(iso: str) -> str:
    """RFC 3339 to the second, in UTC, as the API server writes event times."""
    return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_events(row: PodRow, attempts: Iterable[AttemptRow], bindings: Iterable[BindingRow]) -> list[dict[str, Any]]:
    """The pod's events, oldest last-seen first (kubectl's order)."""
    scheduler = (row.pod.spec.scheduler_name if row.pod is not None else "") or DEFAULT_SCHEDULER
    raw: list[tuple[datetime, str, str, str, str]] = []
    for a in attempts:
        if a.node_name is None:  # a placement is reported by its bind, as upstream does after binding
            raw.append((a.attempted_at, "Warning", "FailedScheduling", a.profile or scheduler, a.message or ""))
    for b in bindings:
        when = b.decided_at or b.requested_at
        if when is None:
            continue
        if b.state == "Bound":
            raw.append((when, "Normal", "Scheduled", scheduler,
                        f"Successfully assigned {row.namespace}/{row.name} to {b.node_name}"))
        elif b.state == "Rejected" and not (row.deleted and b.reason == POD_DELETED):
            # A bind in flight when the pod was deleted (a preemption's victim) is refused for
            # that alone: the deletion is the pod's last event, not a scheduling failure.
            raw.append((when, "Warning", "FailedScheduling", scheduler,
                        f'running Bind plugin "DefaultBinder": {b.reason or "rejected"}'))
    if row.preempted_by and row.deleted_at is not None:
        raw.append((row.deleted_at, "Normal", "Preempted", scheduler,
                    f"Preempted by pod {row.preempted_by} on node {row.preempted_on or row.node_name or '<unknown>'}"))
    folded: dict[tuple[str, str, str, str], _Event] = {}
    for when, kind, reason, source, message in sorted(raw, key=lambda r: r[0]):
        key = (kind, reason, source, message)
        seen = folded.get(key)
        if seen is None:
            folded[key] = _Event(kind, reason, source, message, when, when)
        else:
            seen.count, seen.last = seen.count + 1, max(seen.last, when)
    return [e.render() for e in sorted(folded.values(), key=lambda e: (e.last, e.first))]
