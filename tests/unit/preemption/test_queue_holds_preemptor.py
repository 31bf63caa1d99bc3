"""The queue service keeps a pod whose preemption was asked for in its scheduling cycle until the
preemption service answers: cluster events meanwhile do not bring it back for a second attempt
(which would ask for a second preemption), and they send it to backoff once the answer comes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prometheus_client import CollectorRegistry

from services.queue.cycles import Evaluated
from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.options import SchedulerOptions
from services.queue.scheduler import Scheduler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import (
    Envelope,
    NodeUpserted,
    OutgoingEvent,
    PodSubmitted,
    PreemptionDecided,
    PreemptionRequested,
    envelope,
)
from shared.framework import events as cluster_events
from shared.framework.status import Code, Status
from shared.protocol.sharded import MergedFilter
from shared.scheduler.fit_error import Diagnosis
from tests.unit.events.samples import make_node
from tests.unit.preemption.support import make_pod


class _Published(list[OutgoingEvent]):
    """What the scheduler published, in order."""

    async def __call__(self, events: Sequence[OutgoingEvent]) -> None:
        self.extend(events)


def _scheduler(unschedulable_timeout_s: float = 300.0, preemption_timeout_s: float = 300.0) -> Scheduler:
    """One full 2-cpu node and a pending 1-cpu pod of priority 100."""
    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="2")), producer="t"))
    for name in ("low-a", "low-b"):
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", priority=0, node_name="node-a")), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("hi", cpu="1", priority=100)), producer="t"))
    options = SchedulerOptions(unschedulable_timeout_s=unschedulable_timeout_s,
                               preemption_timeout_s=preemption_timeout_s)
    return Scheduler(view, profiles_from(None), Gatherer(), _Published(), SchedulerMetrics(CollectorRegistry()),
                     options)


async def _fail_with_preemption(s: Scheduler) -> str:
    """Pop the pod, decide it from a merge where every node failed it, which asks for preemption;
    the request's attempt id."""
    s.start_live()
    batch = s.pop_batch()
    assert batch is not None and len(batch) == 1
    (attempt,) = s.attempts_of(batch)
    diagnosis = Diagnosis()
    diagnosis.node_to_status = {"node-a": Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin="NodeResourcesFit")}
    diagnosis.unschedulable_plugins = {"NodeResourcesFit"}
    merged = [MergedFilter(diagnosis=diagnosis)]
    watermark, assumed = s.view_mark()
    evaluated = Evaluated("batch-1", s.view.snapshot(), watermark, assumed, merged, {})
    [decision] = s.decide([attempt], merged, evaluated, {}, watermark, assumed)
    assert decision.verdict == "fit-error"
    await s.flush()
    assert isinstance(s.publish, _Published)
    requests = [o for o in s.publish if isinstance(o.envelope.payload, PreemptionRequested)]
    assert len(requests) == 1
    return attempt.attempt_id


def _events_meanwhile(s: Scheduler) -> None:
    s.queue.move_all_to_active_or_backoff_queue(cluster_events.ASSIGNED_POD_DELETE, None, None)
    s.queue.move_all_to_active_or_backoff_queue(cluster_events.NODE_ADD, None, None)
    s.queue.flush_unschedulable_pods_left_over()


def _decided(attempt_id: str, nominated_node: str = "", **fields: Any) -> Envelope:
    return envelope(PreemptionDecided(preemptor_uid="uid-hi", attempt_id=attempt_id, nominated_node=nominated_node,
                                      **fields), producer="preemption")


async def test_a_pod_is_not_attempted_again_while_its_preemption_is_decided() -> None:
    s = _scheduler()
    attempt_id = await _fail_with_preemption(s)
    _events_meanwhile(s)
    assert s.pop_batch() == []
    assert s.queue.in_flight() == ["uid-hi"]

    # Victims chosen: events came during its cycle, so it backs off, then goes again.
    s.preemption_decided(_decided(attempt_id, nominated_node="node-a", message=""))
    pending = s.queue.pending_pods()
    assert [q.pod_info.uid for q in pending.backoff] == ["uid-hi"] and not pending.unschedulable
    assert s.queue.in_flight() == []


async def test_a_pod_told_it_fits_now_goes_again_at_once() -> None:
    s = _scheduler()
    attempt_id = await _fail_with_preemption(s)
    s.preemption_decided(_decided(
        attempt_id, message='preemption: not needed, the pod fits on node "node-a" now', fits="node-a"))
    batch = s.pop_batch()
    assert batch is not None and [q.pod_info.uid for q in batch] == ["uid-hi"]


async def test_with_no_event_meanwhile_a_pod_whose_preemption_failed_waits_for_one() -> None:
    s = _scheduler()
    attempt_id = await _fail_with_preemption(s)
    s.preemption_decided(_decided(attempt_id, message="preemption: 0/1 nodes are available: "
                                  "1 No preemption victims found for incoming pod."))
    pending = s.queue.pending_pods()
    assert [q.pod_info.uid for q in pending.unschedulable] == ["uid-hi"] and not pending.backoff


async def test_a_preemptor_whose_request_goes_unanswered_returns_after_the_preemption_timeout() -> None:
    s = _scheduler(preemption_timeout_s=0.0)
    attempt_id = await _fail_with_preemption(s)
    s.release_unanswered()
    assert [q.pod_info.uid for q in s.queue.pending_pods().unschedulable] == ["uid-hi"]
    assert s.preemptions == {} and s.queue.in_flight() == []
    # A decision that comes after all is ignored.
    assert s.preemption_decided(_decided(attempt_id, nominated_node="node-a", message="")) == []


async def test_a_request_within_the_timeout_keeps_its_pod_held() -> None:
    s = _scheduler()
    await _fail_with_preemption(s)
    s.release_unanswered()
    assert len(s.preemptions) == 1 and s.queue.in_flight() == ["uid-hi"]


async def test_a_short_unschedulable_timeout_does_not_release_a_preemptor() -> None:
    # Released early, it would ask again while its first request still waits in the backlog.
    s = _scheduler(unschedulable_timeout_s=0.0)
    await _fail_with_preemption(s)
    s.release_unanswered()
    assert len(s.preemptions) == 1 and s.queue.in_flight() == ["uid-hi"]
