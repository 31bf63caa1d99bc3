"""The in-process benchmark: the core alone, one attempt at a time, timed per attempt."""

from __future__ import annotations

import resource
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from tqdm import tqdm

from shared.adapters.extender_http import build_extenders
from shared.framework.node_info import node_allocatable
from shared.framework.pod_info import PodInfo
from shared.memory import settle_heap
from shared.scheduler.outcome import SimulationReport
from shared.simulation.simulator import Simulator
from shared.workloads import Workload

from ..machine import describe_machine
from .stats import percentile, spread_summary, throughput_series


@dataclass
class BenchResult:
    workload: str
    mode: str
    nodes: int
    pods: int
    pods_per_second: float
    attempt_latency_p50_ms: float
    attempt_latency_p99_ms: float
    e2e_latency_p50_ms: float
    e2e_latency_p99_ms: float
    bound: int
    pending: int
    wall_seconds: float
    cpu_seconds: dict[str, float]
    peak_memory_mb: float
    throughput: list[tuple[float, float]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    filter_workers: int | None = None
    queues: int | None = None
    """Queues sharing the cluster, each scheduling a share of the pods (cluster mode)."""
    propose: str | None = None
    """Whether the filter workers were to propose (cluster mode): "no", "yes", or "auto" (while
    the queue's ranking is dear)."""
    proposed_share: float | None = None
    """The share of the pods sent to the workers in batches they proposed (cluster mode)."""
    pipeline_most: int | None = None
    """The most batches the queue kept at the workers at once (cluster mode; 0: no bound)."""
    workers_most: int | None = None
    """The most filter workers the queue kept busy at once (cluster mode; 0: no bound)."""
    machine: dict[str, str | int] = field(default_factory=describe_machine)
    """Where it ran (berth.machine): compare figures only between runs on one machine."""
    sent_per_pod: float = 0.0
    """Pods the queue sent to the filter workers per measured pod (cluster mode): above one where
    pods went again (a proposal the queue's view refused, a failed attempt retried), and the
    churn's pods count too."""
    walked_again_per_pod: float = 0.0
    """Pods the queue walked again itself per measured pod (cluster mode): each is a whole attempt
    in the queue, where pods of a batch ranked the same few nodes first."""
    pods_per_node: dict[str, float] = field(default_factory=dict)
    """How evenly the pods lie on the nodes once the run is over (`spread_summary`): those running
    before and the measured pods (not the cluster bench's warm-up probes), every node counted. The
    in-process core's is upstream's, so a cluster run's is read against it."""
    churn_submitted: int = 0
    """How many of the workload's churn pods were submitted during the measurement."""
    cpu_ms_per_pod: dict[str, float] = field(default_factory=dict)
    """Each process's CPU milliseconds per measured pod, and their "total": the figure to compare
    builds and worker counts by (a machine's speed drifts; the work per pod does not)."""
    queue_busy: float | None = None
    """The queue's CPU seconds per second of the measured run (cluster mode), the mean of the
    queues where several share the cluster: each is one process, so near 1 it bounds pods/s
    whatever the number of filter workers."""
    queue_waited: float | None = None
    """The share of the measured run the queue was off the CPU while the batch it decides next was
    at the workers (cluster mode; the mean of the queues where several share the cluster): waiting
    for their answers, or, on a machine short of cores, for a core. Where the queue is neither busy
    nor waiting, it waited for a core otherwise."""

    def __post_init__(self) -> None:
        if not self.cpu_ms_per_pod and self.pods:
            per_pod = {k: 1000 * v / self.pods for k, v in self.cpu_seconds.items()}
            self.cpu_ms_per_pod = {**per_pod, "total": sum(per_pod.values())}


class Progress:
    """A progress bar on stderr (tqdm), drawn only when `enabled`; `tick` is cheap enough to call
    once per scheduling attempt (the bar is moved every 200)."""

    EVERY = 200

    def __init__(self, total: int, enabled: bool, unit: str = "attempts") -> None:
        self.total, self.done = total, 0
        self._drawn = 0
        self._bar = tqdm(total=total, unit=f" {unit}", disable=not enabled, file=sys.stderr, dynamic_ncols=True,
                         mininterval=0.2, smoothing=0.1)

    def tick(self) -> None:
        self.done += 1
        if self.done - self._drawn >= self.EVERY or self.done == self.total:
            self._move()

    def update(self, done: int, every: int = 1) -> None:
        self.done = done
        if done - self._drawn >= every or done == self.total:
            self._move()

    def _move(self) -> None:
        self._bar.update(self.done - self._drawn)
        self._drawn = self.done

    def close(self) -> None:
        self._move()
        self._bar.close()


def run_inprocess(workload: Workload, seed: int, progress: bool) -> BenchResult:
    measured = {p.metadata.uid for p in workload.cluster.pods[len(workload.cluster.pods) - workload.measured:]}
    attempts: list[float] = []
    bound_at: dict[str, float] = {}
    bar = Progress(workload.measured, progress)
    cpu0 = time.process_time()
    sim = Simulator(workload.cluster, seed=seed, make_extenders=build_extenders)
    settle_heap()
    start = time.perf_counter()
    last = [start]

    churned = [0]  # how many of the churn's pods were submitted

    def on_attempt(pod: PodInfo, node: str | None) -> None:
        now = time.perf_counter()
        attempts.append(now - last[0])
        last[0] = now
        if node is not None and pod.uid in measured:
            bound_at[pod.uid] = now - start
        bar.tick()
        # The churn's pods arrive on the wall clock while measured pods are still unbound.
        due = min(int((now - start) / workload.churn_interval_s), len(workload.churn)) if workload.churn else 0
        while churned[0] < due and len(bound_at) < len(measured):
            sim.submit(workload.churn[churned[0]])
            churned[0] += 1

    sim.on_attempt = on_attempt
    report = sim.run()
    wall = time.perf_counter() - start
    bar.close()
    cpu = time.process_time() - cpu0
    e2e = sorted(bound_at.values())
    return BenchResult(
        workload=workload.name, mode="inprocess", nodes=len(workload.cluster.nodes), pods=workload.measured,
        pods_per_second=len(bound_at) / wall if wall > 0 else 0.0,
        attempt_latency_p50_ms=percentile(attempts, 50) * 1000,
        attempt_latency_p99_ms=percentile(attempts, 99) * 1000,
        e2e_latency_p50_ms=percentile(e2e, 50) * 1000,
        e2e_latency_p99_ms=percentile(e2e, 99) * 1000,
        bound=len(bound_at), pending=workload.measured - len(bound_at), wall_seconds=wall,
        cpu_seconds={"inprocess": cpu},
        peak_memory_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        throughput=throughput_series(e2e, bucket=max(wall / 50, 0.05)),
        problems=check_outcome(workload, report), churn_submitted=churned[0],
        pods_per_node=spread_summary(_pods_per_node(workload, report)),
    )


def _pods_per_node(workload: Workload, report: SimulationReport) -> list[int]:
    count = Counter(o.nodeName for o in report.pods if o.phase == "Bound" and o.nodeName)
    return [count[n.metadata.name] for n in workload.cluster.nodes]


def check_outcome(workload: Workload, report: SimulationReport) -> list[str]:
    """Invariant 1 and 2 on the result: no node over-committed, every pod bound or pending with a reason."""
    problems: list[str] = []
    pods = {f"{p.metadata.namespace}/{p.metadata.name}": PodInfo(p) for p in (*workload.cluster.pods, *workload.churn)}
    nodes = {n.metadata.name: node_allocatable(n) for n in workload.cluster.nodes}
    cpu: Counter[str] = Counter()
    mem: Counter[str] = Counter()
    count: Counter[str] = Counter()
    for outcome in report.pods:
        key = f"{outcome.namespace}/{outcome.name}"
        if outcome.phase == "Bound" and outcome.nodeName:
            info = pods[key]
            cpu[outcome.nodeName] += info.requests.milli_cpu
            mem[outcome.nodeName] += info.requests.memory
            count[outcome.nodeName] += 1
        elif outcome.phase == "Pending" and not outcome.message:
            problems.append(f"{key} is pending without a reason")
    for name, alloc in nodes.items():
        if cpu[name] > alloc.milli_cpu or mem[name] > alloc.memory or count[name] > alloc.allowed_pod_number:
            problems.append(f"node {name} over-committed: cpu {cpu[name]}m/{alloc.milli_cpu}m, "
                            f"memory {mem[name]}/{alloc.memory}, pods {count[name]}/{alloc.allowed_pod_number}")
    reported = {f"{o.namespace}/{o.name}" for o in report.pods}
    lost = sum(1 for p in workload.cluster.pods if f"{p.metadata.namespace}/{p.metadata.name}" not in reported)
    if lost:  # the churn's pods are reported when they were submitted
        problems.append(f"{lost} pods lost")
    return problems
