"""As a batch goes out, the queue sends an empty request at the batch's watermark to each worker it
may send batches to that has none in hand and was sent nothing lately: the worker folds the log
meanwhile, so a batch it gets later does not wait while it folds everything since. Replay reads
such a request as no cycle."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest
from prometheus_client import CollectorRegistry

from services.queue import drivers
from services.queue.dispatch import SPREAD
from services.queue.drivers import Lockstep, Pipelined
from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.scheduler import Scheduler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.errors import BrokerUnavailable
from shared.events import (
    NODE_SHARDS,
    BindRequested,
    FilterBatchRequested,
    NodeUpserted,
    OutgoingEvent,
    PodShardResult,
    PodSubmitted,
    Position,
    ReceivedEvent,
    ShardFiltered,
    envelope,
)
from shared.protocol.resting import KEEP_AWAKE_S, REST_AFTER_S, SPARE_AFTER_S
from shared.replay.history import History
from tests.unit.events.samples import make_node
from tests.unit.preemption.support import make_pod


def _requests(published: Sequence[OutgoingEvent]) -> list[tuple[FilterBatchRequested, int | None]]:
    return [(e.envelope.payload, e.partition) for e in published
            if isinstance(e.envelope.payload, FilterBatchRequested)]


async def _one_batch(workers_most: int, *, refuse: Callable[[FilterBatchRequested], bool] = lambda r: False,
                     gatherer: Gatherer | None = None, hold: asyncio.Event | None = None) -> list[OutgoingEvent]:
    """The events a live queue publishes for one pod's batch, its worker answering at once;
    a publish holding a request `refuse` names fails, or, given `hold`, waits until it is set."""
    published: list[OutgoingEvent] = []
    gatherer = gatherer or Gatherer(workers_most=workers_most)

    async def publish(events: Sequence[OutgoingEvent]) -> None:
        if any(refuse(r) for r, _ in _requests(events)):
            if hold is None:
                raise BrokerUnavailable("publishing: KafkaTimeoutError")
            await hold.wait()
        published.extend(events)
        for request, _ in _requests(events):
            if request.pods:
                gatherer.offer(ShardFiltered(
                    batch_id=request.batch_id, cycle=request.cycle, shard=0, shards=list(range(NODE_SHARDS)),
                    phase=request.phase, node_count=1,
                    results=[PodShardResult(pod_uid=p.metadata.uid, feasible=["node-a"]) for p in request.pods]))

    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="4")), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("web", cpu="1", priority=0)), producer="t"))
    s = Scheduler(view, profiles_from(None), gatherer, publish, SchedulerMetrics(CollectorRegistry()))
    s.start_live()
    batch = s.pop_batch()
    assert batch is not None
    await Pipelined(s).run(batch, asyncio.Event())
    return published


async def test_a_batch_primes_the_partitions_of_workers_not_known_yet() -> None:
    requests = _requests(await _one_batch(workers_most=0))
    (batch, sent), *primers = requests
    assert len(batch.pods) == 1
    assert sorted(p or 0 for _, p in primers) == sorted(set(range(NODE_SHARDS)) - {sent or 0})
    assert all(p is not None for _, p in requests)
    for primer, _ in primers:
        assert primer.pods == [] and primer.phase == "filter" and primer.whole
        assert primer.watermark == batch.watermark and primer.assumed == batch.assumed
        assert primer.batch_id != batch.batch_id


async def test_where_one_worker_is_kept_busy_nothing_is_primed() -> None:
    requests = _requests(await _one_batch(workers_most=1))
    assert [len(r.pods) for r, _ in requests] == [1]


async def test_replay_reads_a_primer_as_no_cycle() -> None:
    published = await _one_batch(workers_most=0)
    received = [ReceivedEvent(e.envelope, Position(e.topic, e.partition or 0, i)) for i, e in enumerate(published)]
    history = History(received)
    assert [len(b.request.pods) for b in history.ordered_batches()] == [1]


async def test_a_primer_that_cannot_be_published_leaves_the_batch_decided() -> None:
    published = await _one_batch(workers_most=0, refuse=lambda r: not r.pods)
    assert [len(r.pods) for r, _ in _requests(published)] == [1]
    assert any(isinstance(e.envelope.payload, BindRequested) for e in published)


async def test_a_primer_whose_publish_hangs_does_not_hold_the_batch_up() -> None:
    hold = asyncio.Event()
    published = await asyncio.wait_for(_one_batch(workers_most=0, refuse=lambda r: not r.pods, hold=hold), 5)
    assert [len(r.pods) for r, _ in _requests(published)] == [1]
    assert any(isinstance(e.envelope.payload, BindRequested) for e in published)
    hold.set()
    await asyncio.sleep(0)
    assert len(_requests(published)) > 1  # the primers, once the broker took them


async def test_a_batch_whose_request_is_not_published_is_not_left_in_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drivers, "FAILED_CYCLE_PAUSE_S", 0.0)
    gatherer = Gatherer()
    for owned in ([0, 1, 2, 3], [4, 5, 6, 7]):
        gatherer.dispatcher.owned(owned)
    assert await _one_batch(0, refuse=lambda r: bool(r.pods), gatherer=gatherer) == []
    assert gatherer.dispatcher.choose("next") // 4 == 0  # the first worker has nothing in hand


async def _idle_queue(workers_most: int, gatherer: Gatherer | None = None) -> list[OutgoingEvent]:
    """What a live queue with nothing to schedule publishes in its first tenths of a second."""
    published: list[OutgoingEvent] = []

    async def publish(events: Sequence[OutgoingEvent]) -> None:
        published.extend(events)

    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="4")), producer="t"))
    s = Scheduler(view, profiles_from(None), gatherer or Gatherer(workers_most=workers_most), publish,
                  SchedulerMetrics(CollectorRegistry()))
    s.start_live()
    stopping = asyncio.Event()
    running = asyncio.ensure_future(s.run(stopping))
    await asyncio.sleep(0.3)  # several idle turns of its loop, well within PRIME_AFTER_S
    stopping.set()
    await asyncio.wait_for(running, 5)
    return published


async def test_an_idle_queue_primes_the_workers_it_may_use_at_once_and_once_a_while() -> None:
    requests = _requests(await _idle_queue(workers_most=1))
    assert [(r.pods, p) for r, p in requests] == [([], SPREAD[0])]  # once, to the first destination
    (primer, _), = requests
    assert primer.watermark and primer.whole


async def test_an_idle_queue_primes_every_destination_it_may_use() -> None:
    gatherer = Gatherer(workers_most=2)
    for owned in ([0, 1], [2, 3], [4, 5], [6, 7]):
        gatherer.dispatcher.owned(owned)
    sent = sorted(p or 0 for _, p in _requests(await _idle_queue(2, gatherer)))
    assert [p // 2 for p in sent] == [0, 2]  # the first two workers in order, one partition each


def test_the_workers_a_queue_may_use_are_primed_before_they_would_rest() -> None:
    assert REST_AFTER_S >= 3 * KEEP_AWAKE_S  # a busy queue's loop comes back to idle late
    # An idle queue primes a worker it never sent to at its loop's next idle turn: well before
    # that worker would rest as a spare.
    assert max(Lockstep.idle_s, Pipelined.idle_s) < SPARE_AFTER_S / 2
