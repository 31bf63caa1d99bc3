"""The cluster benchmark: every service as its own process on the embedded stack (or the endpoints the
environment names), the workload fed through Kafka as the gateway would publish it, each measured pod
timed from its submission to its PodBound event.

The nodes and the pods already running go in first, with one probe pod behind them: once the probe is
bound, the services have folded the cluster. With several filter workers, more probes follow one at a
time (each batch goes to one worker, and a worker folds the log as far as its requests name), so
every worker has caught up before the clock starts as the measured pods are published.
Afterwards the event log is read back and checked: no pod bound twice, no node over-committed, every
bind answered, every measured pod bound or pending with an upstream reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import psutil

from shared.adapters.kafka import KafkaPublisher, make_producer
from shared.adapters.kafka.reader import read_topic
from shared.binding.queue_owner import hard_default_spread, owning_queue
from shared.events import (
    PLACEMENTS,
    AnyEvent,
    Envelope,
    NodeUpserted,
    OutgoingEvent,
    PodBound,
    PodSubmitted,
    TopicRegistry,
    envelope,
)
from shared.model import Pod
from shared.profiles import build_profiles
from shared.settings import AUTO, Settings, env_flag_or_auto, env_int, load_settings
from shared.workloads import Workload

from ..fleet import Fleet, service_env
from ..services import UpOptions, queue_env
from .cpu_clock import cpu_seconds
from .fleet_metrics import (
    answer_wait_seconds,
    attempt_latency,
    proposed_pods,
    queue_metrics,
    sent_pods,
    walked_again_pods,
    workers_state_of,
)
from .inprocess import BenchResult, Progress
from .ledger import Ledger, read_ledger
from .stats import percentile, spread_summary, throughput_series

PUBLISH_CHUNK = 500
WARMUP_S = 60.0
"""At most this long sending probes before measuring, until every filter worker the queue keeps
busy has answered a request (a worker folds the log only as far as its requests ask, so one
measured while it folds all the log at its first request, the queue priming idle workers as
batches go out, would count seconds of that in the run on 50,000 nodes) and every other worker
has rested once (`shared.protocol.resting`), as they have in a cluster that runs for more than a
few seconds: spares still polling ten times a second until their first rest, five seconds after
they start, would count in a run of three."""
WARMUP_POLL_S = 0.25
"""How often the warm-up reads the workers' metrics."""
WARMUP_PROBE_S = 1.0
"""How often it sends a probe meanwhile: the queue primes a worker at most once a second."""
STALL_S = 60.0
"""No pod bound for this long ends the run (the rest count as pending)."""


def run_cluster(workload: Workload, *, options: UpOptions, progress: bool, timeout_s: float,
                logs: Path | None = None, record: Path | None = None, config: Path | None = None) -> BenchResult:
    """`logs`: keep every service's log there (they go with the temporary state otherwise);
    `record`: write the whole event log there as JSON Lines afterwards (for `berth replay`);
    `config`: the KubeSchedulerConfiguration file every scheduling service runs with."""
    from berth.stack.embedded import EmbeddedStack

    base = load_settings()
    settings = replace(base, topic_prefix=f"bench{uuid.uuid4().hex[:8]}.")
    with tempfile.TemporaryDirectory(prefix="berth-bench-") as tmp:
        state = Path(tmp)
        stack = EmbeddedStack(state, settings=settings, durable=False)
        try:
            endpoints = stack.start()
            settings = settings.with_endpoints(kafka_bootstrap_servers=endpoints.kafka_bootstrap_servers,
                                               database_url=endpoints.database_url)
            env = service_env(endpoints.kafka_bootstrap_servers, endpoints.database_url, settings.topic_prefix,
                              uuid.uuid4().hex)
            env.setdefault("BERTH_LOG_LEVEL", "WARNING")
            if config is not None:
                env["BERTH_SCHEDULER_CONFIG"] = str(config)
            fleet = Fleet(env, logs or state / "logs", options)
            try:
                fleet.start_all()
                result = asyncio.run(_measure(workload, settings, fleet, progress, timeout_s, endpoints.pids))
                if record is not None:
                    from shared.adapters.history import export_log

                    count = asyncio.run(export_log(settings, record))
                    if progress:
                        print(f"{count} events written to {record}", file=sys.stderr)
                return result
            finally:
                fleet.stop_all()
        finally:
            stack.stop()


async def _measure(workload: Workload, settings: Settings, fleet: Fleet, progress: bool,
                   timeout_s: float, stack_pids: Mapping[str, int]) -> BenchResult:
    registry = TopicRegistry(settings.topic_prefix)
    cluster = workload.cluster
    split = len(cluster.pods) - workload.measured
    setup, measured = cluster.pods[:split], cluster.pods[split:]
    queue = {**fleet.env, **queue_env(fleet.options)}  # what the fleet's queue runs with
    probe = _probe(measured[0])
    watcher = _BoundWatcher(settings, registry)
    await watcher.start()
    sampler = _Sampler(fleet, stack_pids)
    sampler_task = asyncio.ensure_future(sampler.run())
    producer = make_producer(settings, client_id="bench")
    await producer.start()
    publisher = KafkaPublisher(producer, registry)
    clock = _Stamps()
    try:
        await publisher.publish([OutgoingEvent("nodes", clock.envelope(NodeUpserted(node=n))) for n in cluster.nodes])
        await _publish_pods(publisher, clock, [*setup, probe])
        queue_of = queue_rule(fleet.options, workload)
        templates = first_owned(queue_of, workload)
        owners = set(templates)
        if note := idle_queues_note(fleet.options, owners):
            print(note, file=sys.stderr)
        await watcher.wait_for({probe.metadata.uid}, timeout_s)
        await _warm_up(fleet, publisher, clock, watcher, _Probes(templates, queue_of), timeout_s,
                       _warm_workers(fleet.options, owners, env_int(queue, "BERTH_QUEUE_WORKERS_MOST", 0)))
        cpu_before = sampler.cpu()
        metrics = queue_metrics(fleet)
        sent_before, proposed_before = sent_pods(metrics), proposed_pods(metrics)
        walked_before = walked_again_pods(metrics)
        waited_before = answer_wait_seconds(metrics)
        want = {p.metadata.uid for p in measured}
        bar = Progress(len(want), progress, unit="pods bound")
        started = time.monotonic()
        churn = _Churn(publisher, clock, workload)
        submitted: dict[str, float] = {}
        try:
            for i in range(0, len(measured), PUBLISH_CHUNK):
                chunk = measured[i:i + PUBLISH_CHUNK]
                now = time.monotonic()
                submitted.update((p.metadata.uid, now) for p in chunk)
                await _publish_pods(publisher, clock, chunk)
            await watcher.wait_for(want, timeout_s, stall_s=STALL_S, on_progress=bar.update)
        finally:
            await churn.stop()
        bar.close()
        cpu = {k: v - cpu_before.get(k, 0.0) for k, v in sampler.cpu().items()}
        read_over = time.monotonic() - started  # the span the CPU and the queue's counters cover
        done = {uid: t for uid, t in watcher.bound.items() if uid in want}
        last = max(done.values(), default=started)
        wall = last - started
        e2e = sorted(t - submitted[uid] for uid, t in done.items())
        metrics = queue_metrics(fleet)
        attempts = attempt_latency(metrics)
        sent = sent_pods(metrics) - sent_before
        proposed = proposed_pods(metrics) - proposed_before
        walked = walked_again_pods(metrics) - walked_before
        waited = answer_wait_seconds(metrics) - waited_before
        ledger = await _answered_ledger(settings, registry)
    finally:
        sampler_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler_task
        await producer.stop()
        await watcher.stop()
    problems = ledger.problems()
    pending = ledger.pending
    problems += [f"{uid} is neither bound nor pending with a reason" for uid in want - done.keys()
                 if pending.get(uid) is None]
    return BenchResult(
        workload=workload.name, mode="cluster", nodes=len(cluster.nodes), pods=workload.measured,
        pods_per_second=len(done) / wall if wall > 0 else 0.0,
        attempt_latency_p50_ms=attempts[0] * 1000, attempt_latency_p99_ms=attempts[1] * 1000,
        e2e_latency_p50_ms=percentile(e2e, 50) * 1000, e2e_latency_p99_ms=percentile(e2e, 99) * 1000,
        bound=len(done), pending=len(want) - len(done), wall_seconds=wall, cpu_seconds=cpu,
        peak_memory_mb=sampler.peak_mb,
        throughput=throughput_series(sorted(t - started for t in done.values()), bucket=max(wall / 50, 0.05)),
        problems=problems, filter_workers=fleet.options.filter_workers, churn_submitted=churn.submitted,
        propose=propose_policy(queue), proposed_share=proposed / sent if sent else 0.0,
        pipeline_most=env_int(queue, "BERTH_QUEUE_PIPELINE_MOST", 0),
        workers_most=env_int(queue, "BERTH_QUEUE_WORKERS_MOST", 0),
        sent_per_pod=sent / workload.measured if workload.measured else 0.0,
        walked_again_per_pod=walked / workload.measured if workload.measured else 0.0,
        queues=fleet.options.queues,
        queue_busy=cpu.get("queue", 0.0) / read_over / fleet.options.queues if read_over > 0 else None,
        queue_waited=waited / read_over / fleet.options.queues if read_over > 0 else None,
        pods_per_node=spread_summary(workload_pods_per_node(ledger)),
    )


def workload_pods_per_node(ledger: Ledger) -> list[int]:
    """Each node's pods but the warm-up probes, as the in-process core's count is made."""
    return [sum(1 for p in info.pods if not p.pod.metadata.name.startswith(PROBE_NAME))
            for info in ledger.view.snapshot().node_info_list]


async def _answered_ledger(settings: Settings, registry: TopicRegistry, wait_s: float = 30.0) -> Ledger:
    """The log once every bind requested so far has its outcome and every pod bound, gone or
    pending after an attempt (binds still in flight when the measured pods stop being bound, and
    churn pods submitted just before, are not lost ones), or as it is after `wait_s` (the whole
    wait, when the measured pods ran out of time unattempted)."""
    deadline = time.monotonic() + wait_s
    while True:
        ledger = await read_ledger(settings, registry)
        if ledger.settled() or time.monotonic() > deadline:
            return ledger
        await asyncio.sleep(0.5)


def queue_rule(options: UpOptions, workload: Workload) -> Callable[[Pod], int]:
    """Which of the cluster's queues schedules a pod, under the workload's configuration."""
    queues = options.queues
    together = hard_default_spread(build_profiles(workload.cluster.config)) if queues > 1 else frozenset()
    return lambda pod: owning_queue(pod, queues, together)


def first_owned(queue_of: Callable[[Pod], int], workload: Workload) -> dict[int, Pod]:
    """Each queue that owns any of the measured pods, with the first it owns (a workload whose pods
    all span nodes is the first queue's alone)."""
    out: dict[int, Pod] = {}
    for p in workload.cluster.pods[len(workload.cluster.pods) - workload.measured:]:
        out.setdefault(queue_of(p), p)
    return out


class _Probes:
    """Warm-up probes, each made from a measured pod of the next queue that owns measured pods, in
    turn, and named so that it goes there: a probe another queue took would wake workers the
    measured pods never use, and the warm-up would count them. (A pod that spans nodes goes to
    the first queue whatever its name; any other, by its name's hash.)"""

    TRIES = 256
    """Names tried for one probe before taking the last (a uid hashes to a given queue of four
    about one time in four)."""

    def __init__(self, templates: Mapping[int, Pod], queue_of: Callable[[Pod], int]) -> None:
        self.templates, self.queue_of = dict(templates), queue_of
        self.owners = sorted(self.templates)
        self.k = 0
        self.turn = 0

    def next(self) -> Pod:
        target = self.owners[self.turn % len(self.owners)]
        template = self.templates[target]
        self.turn += 1
        self.k += 1
        probe = _probe(template, self.k)
        for _ in range(self.TRIES):
            if self.queue_of(probe) == target:
                break
            self.k += 1
            probe = _probe(template, self.k)
        return probe


def idle_queues_note(options: UpOptions, owners: set[int]) -> str:
    """What to tell where queues own none of the measured pods ("" where every queue owns some)."""
    if len(owners) >= options.queues:
        return ""
    per_queue = options.filter_workers // options.queues
    own = "owns" if len(owners) == 1 else "own"
    return (f"note: {len(owners)} of {options.queues} queues {own} the measured pods (pods whose constraints span "
            f"nodes are the first queue's), so {len(owners) * per_queue} of {options.filter_workers} filter "
            f"workers filter them; --queues 1 gives them all {options.filter_workers}")


def _warm_workers(options: UpOptions, owners: set[int], workers_most: int) -> int:
    """The filter workers the measured pods will keep busy: those of the queues that own any of
    them (other queues' workers never answer), at most `workers_most` (0: no limit) of each
    queue's."""
    per_queue = options.filter_workers // options.queues
    return len(owners) * min(per_queue, workers_most or per_queue)


async def _warm_up(fleet: Fleet, publisher: KafkaPublisher, clock: _Stamps, watcher: _BoundWatcher,
                   probes: _Probes, timeout_s: float, busy: int) -> None:
    """Probes a second apart (each a batch that primes the idle workers) until the `busy` workers
    the measured pods will use have answered a request and every other one has rested, read from
    the workers' metrics (off the loop: a worker folding the log answers late); `WARMUP_S` at most."""
    deadline = time.monotonic() + min(WARMUP_S, timeout_s)
    last = time.monotonic()
    while (state := await asyncio.to_thread(workers_state_of, fleet)).answering < busy or not state.settled:
        if time.monotonic() >= deadline:
            print(f"warning: {state.unsettled(busy)} in the warm-up; measuring anyway", file=sys.stderr)
            return
        await asyncio.sleep(WARMUP_POLL_S)
        if time.monotonic() - last < WARMUP_PROBE_S:
            continue
        probe = probes.next()
        await _publish_pods(publisher, clock, [probe])
        await watcher.wait_for({probe.metadata.uid}, timeout_s)
        last = time.monotonic()


PROBE_NAME = "berth-bench-probe"
"""The warm-up probes' names (the first; the others add "-k")."""


def _probe(template: Pod, k: int = 0) -> Pod:
    name = PROBE_NAME if k == 0 else f"{PROBE_NAME}-{k}"
    meta = msgspec.structs.replace(template.metadata, name=name, uid=f"default/{name}")
    return msgspec.structs.replace(template, metadata=meta)


class _Stamps:
    """Strictly increasing timestamps, as the gateway gives one apply (submission order is an order)."""

    def __init__(self) -> None:
        self.last = datetime.now(UTC)

    def envelope(self, payload: AnyEvent) -> Envelope:
        self.last = max(self.last + timedelta(microseconds=1), datetime.now(UTC))
        return envelope(payload, producer="bench", timestamp=self.last)


class _Churn:
    """The workload's churn: its pods published at a fixed rate, one every `churn_interval_s` from
    the start, until stopped or none is left. A pod being published when it is stopped is
    published whole (the ledger read after it then sees the pod)."""

    def __init__(self, publisher: KafkaPublisher, clock: _Stamps, workload: Workload) -> None:
        self.submitted = 0
        self._stopping = asyncio.Event()
        self._task = asyncio.ensure_future(self._run(publisher, clock, workload)) if workload.churn else None

    async def _run(self, publisher: KafkaPublisher, clock: _Stamps, workload: Workload) -> None:
        start = time.monotonic()
        for k, pod in enumerate(workload.churn, start=1):
            delay = start + k * workload.churn_interval_s - time.monotonic()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), max(delay, 0.0))
            if self._stopping.is_set():
                return
            await _publish_pods(publisher, clock, [pod])
            self.submitted += 1

    async def stop(self) -> None:
        self._stopping.set()
        if self._task is not None:
            await self._task


async def _publish_pods(publisher: KafkaPublisher, clock: _Stamps, pods: list[Pod]) -> None:
    for i in range(0, len(pods), PUBLISH_CHUNK):
        await publisher.publish([OutgoingEvent("pods", clock.envelope(PodSubmitted(pod=p)))
                                 for p in pods[i:i + PUBLISH_CHUNK]])


class _BoundWatcher:
    """Follows `placements` from the beginning (`read_topic`): when each pod was bound (monotonic).

    That is the binder's stamp on the pod's PodBound, not when this reader fetched it: a follower
    fetches in rounds (the broker holds a fetch up to the fetch wait), which had added up to a
    round's length to the end of every run. Every service runs on this machine, so the stamps and
    this clock agree."""

    def __init__(self, settings: Settings, registry: TopicRegistry) -> None:
        self.settings, self.registry = settings, registry
        self.bound: dict[str, float] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._wall_minus_monotonic = time.time() - time.monotonic()

    async def start(self) -> None:
        self._task = asyncio.ensure_future(self._follow())

    async def _follow(self) -> None:
        async for _, env, _ in read_topic(self.settings, PLACEMENTS, registry=self.registry, follow=True,
                                          idle_timeout_ms=200):
            if isinstance(env, Envelope) and isinstance(env.payload, PodBound):
                self.bound.setdefault(env.payload.pod_uid, env.timestamp.timestamp() - self._wall_minus_monotonic)
                self._changed.set()

    async def wait_for(self, uids: set[str], timeout_s: float, *, stall_s: float | None = None,
                       on_progress: Callable[[int], object] | None = None) -> None:
        deadline = time.monotonic() + timeout_s
        last_count, last_change = -1, time.monotonic()
        while True:
            count = sum(1 for u in uids if u in self.bound)
            if on_progress is not None:
                on_progress(count)
            if count != last_count:
                last_count, last_change = count, time.monotonic()
            if count == len(uids):
                return
            now = time.monotonic()
            if now > deadline or (stall_s is not None and now - last_change > stall_s):
                if stall_s is None:
                    raise TimeoutError(f"{len(uids) - count} of {len(uids)} pods not bound after {timeout_s:.0f}s")
                return
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), 1.0)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


class _Sampler:
    """CPU seconds per service (and for the embedded broker and database, whose work the services'
    traffic makes) and the fleet's peak resident memory, sampled once a second."""

    def __init__(self, fleet: Fleet, stack_pids: Mapping[str, int]) -> None:
        self.peak_mb = 0.0
        self._services = [(m.spec.name, p) for m in fleet.members.values() if (p := _process(m.process.pid))]
        self._stack = [(_STACK_LABELS.get(name, name), p) for name, pid in stack_pids.items()
                       if (p := _process(pid))]

    def cpu(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for label, proc in self._services:
            with contextlib.suppress(psutil.Error):
                out[label] = out.get(label, 0.0) + cpu_seconds(proc)
        for label, root in self._stack:
            # The database works in child processes: those it has reaped are in its children_*
            # times, the live ones are read one by one.
            with contextlib.suppress(psutil.Error):
                t = root.cpu_times()
                total = t.user + t.system + t.children_user + t.children_system
                for child in root.children():
                    with contextlib.suppress(psutil.Error):
                        c = child.cpu_times()
                        total += c.user + c.system
                out[label] = out.get(label, 0.0) + total
        return out

    async def run(self) -> None:
        while True:
            total = 0
            for _, proc in self._services:
                with contextlib.suppress(psutil.Error):
                    total += proc.memory_info().rss
            self.peak_mb = max(self.peak_mb, total / (1 << 20))
            await asyncio.sleep(1.0)


_STACK_LABELS = {"tansu": "broker", "postgres": "database"}


def _process(pid: int | None) -> psutil.Process | None:
    try:
        return psutil.Process(pid) if pid is not None else None
    except psutil.Error:
        return None


def propose_policy(queue_env: Mapping[str, str]) -> str:
    """BERTH_QUEUE_PROPOSE as the queue reads it: "auto", "yes" or "no"."""
    said = env_flag_or_auto(queue_env, "BERTH_QUEUE_PROPOSE")
    return AUTO if said is None else "yes" if said else "no"
