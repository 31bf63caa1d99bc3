"""A pod's scheduling history as kube-scheduler's events, and `berth describe`'s rendering of them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from berth.describe_cmd import render
from services.gateway.pod_events import pod_events
from shared.binding.state import POD_DELETED
from shared.projection import AttemptRow, BindingRow, PodRow
from tests.unit.events.samples import make_pod

T0 = datetime(2026, 1, 1, tzinfo=UTC)
FIT = ("0/3 nodes are available: 3 Insufficient cpu. "
       "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")


def _attempt(n: int, node: str | None, message: str | None, at: datetime) -> AttemptRow:
    return AttemptRow(pod_uid="u", attempt=n, profile="default-scheduler", node_name=node, message=message,
                      seed=n, config_hash="h", event_id=uuid.uuid4(), attempted_at=at)


def test_failures_fold_into_one_event_with_a_count_then_the_bind() -> None:
    row = PodRow(uid="u", namespace="default", name="web", pod=make_pod("web", "u"), phase="Bound", node_name="n3")
    attempts = [_attempt(1, None, FIT, T0), _attempt(2, None, FIT, T0 + timedelta(seconds=10)),
                _attempt(3, None, FIT, T0 + timedelta(seconds=30)), _attempt(4, "n1", None, T0 + timedelta(seconds=40)),
                _attempt(5, "n3", None, T0 + timedelta(seconds=50))]
    bindings = [BindingRow(pod_uid="u", attempt_id="u/4", node_name="n1", state="Rejected", reason="Insufficient cpu",
                           requested_at=T0 + timedelta(seconds=40), decided_at=T0 + timedelta(seconds=41)),
                BindingRow(pod_uid="u", attempt_id="u/5", node_name="n3", state="Bound",
                           requested_at=T0 + timedelta(seconds=50), decided_at=T0 + timedelta(seconds=51))]
    events = pod_events(row, attempts, bindings)
    assert [(e["type"], e["reason"], e["count"]) for e in events] == [
        ("Warning", "FailedScheduling", 3), ("Warning", "FailedScheduling", 1), ("Normal", "Scheduled", 1)]
    assert events[0]["message"] == FIT and events[0]["firstTimestamp"] == T0.isoformat()
    assert events[0]["lastTimestamp"] == (T0 + timedelta(seconds=30)).isoformat()
    assert events[1]["message"] == 'running Bind plugin "DefaultBinder": Insufficient cpu'
    assert events[2]["message"] == "Successfully assigned default/web to n3"
    assert {e["from"] for e in events} == {"default-scheduler"}

    text = render({"metadata": {"name": "web", "namespace": "default"}, "spec": {"nodeName": "n3"},
                   "status": {"phase": "Bound", "conditions": [{"type": "PodScheduled", "status": "True"}]},
                   "schedulingEvents": events}, now=T0 + timedelta(seconds=60))
    lines = text.splitlines()
    at = lines.index("Events:")
    assert lines[at + 1].split() == ["Type", "Reason", "Age", "From", "Message"]
    assert lines[at + 2].split() == ["----", "------", "----", "----", "-------"]
    assert lines[at + 1].startswith("  Type     Reason")  # kubectl's two-space gap after the widest cell
    assert "30s (x3 over 60s)" in lines[at + 3] and lines[at + 3].endswith(FIT)
    assert lines[at + 5].split()[:4] == ["Normal", "Scheduled", "9s", "default-scheduler"]


def test_a_victim_gets_preempted_with_the_preemptor_and_node() -> None:
    row = PodRow(uid="v", namespace="default", name="low", pod=make_pod("low", "v", node_name="n2"), deleted=True,
                 deleted_at=T0, preempted_by="uid-high", phase="Deleted", node_name="n2")
    events = pod_events(row, [], [])
    assert [(e["type"], e["reason"], e["message"]) for e in events] == [
        ("Normal", "Preempted", "Preempted by pod uid-high on node n2")]




def test_a_victim_evicted_with_its_bind_in_flight_ends_preempted() -> None:
    """The binder refuses the bind of a pod deleted meanwhile; that refusal is the preemption, not
    a scheduling failure after it."""
    row = PodRow(uid="v", namespace="default", name="low", pod=make_pod("low", "v"), deleted=True,
                 deleted_at=T0, preempted_by="uid-high", preempted_on="n2", phase="Deleted")
    bindings = [BindingRow(pod_uid="v", attempt_id="v/1", node_name="n2", state="Rejected", reason=POD_DELETED,
                           requested_at=T0 - timedelta(seconds=1), decided_at=T0 + timedelta(seconds=1))]
    events = pod_events(row, [_attempt(1, "n2", None, T0 - timedelta(seconds=1))], bindings)
    assert [(e["reason"], e["message"]) for e in events] == [("Preempted", "Preempted by pod uid-high on node n2")]
