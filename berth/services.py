"""The services `berth up` runs: one table, one line per service.

Adding a service is one `ServiceSpec` line: its module must run as `python -m <module>`, read the
shared settings from the environment and serve `/healthz` on BERTH_HTTP_PORT. `replicas` is the
number of processes (a callable for the ones a flag scales, e.g. filter workers).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from shared.errors import ConfigurationError
from shared.events import MOST_QUEUES, NODE_SHARDS
from shared.events.partitioning import shares_hold_whole_runs
from shared.settings import AUTO, env_int

from .client import CliError
from .machine import usable_cores

T = TypeVar("T")


@dataclass(frozen=True)
class UpOptions:
    filter_workers: int = 1
    propose: str | None = None
    """Whether the filter workers propose, as BERTH_QUEUE_PROPOSE says it to the queue ("0",
    "1" or "auto"); None: as the environment says."""
    pipeline_most: int | None = None
    """The most batches the queue keeps at the workers at once (BERTH_QUEUE_PIPELINE_MOST); None:
    as the environment says."""
    workers_most: int | None = None
    """The most filter workers the queue keeps busy at once (BERTH_QUEUE_WORKERS_MOST); None: as
    the environment says."""
    queues: int = 1
    """Queues sharing the cluster, each scheduling a share of the pods (BERTH_QUEUE_PARTITIONS)."""


MOST_DEFAULT_WORKERS = 4
"""The measured best on a 16-core machine (README, "Scaling out the filter workers")."""
CORES_PER_WORKER = 4


def default_filter_workers(cores: int | None = None) -> int:
    """Filter workers when nobody says: one per four cores, one to four. One worker is the fastest
    on two cores (every process shares them); on sixteen, four proposing workers gave
    SchedulingBasic its most pods/s and PodAntiAffinity and TopologySpreading most of theirs."""
    cores = usable_cores() if cores is None else cores
    return max(1, min(MOST_DEFAULT_WORKERS, cores // CORES_PER_WORKER))


def pipeline_most(cores: int | None = None) -> int:
    """The most batches worth keeping at the workers when every service runs on this machine: one
    per core beside the queue's (a batch beyond them waits for a CPU, and its worker folds the log
    for nothing), and never fewer than two (one walked while one is decided)."""
    cores = usable_cores() if cores is None else cores
    return max(2, cores - 1)


SHARED_CORES = 3
"""At most this many cores, every process shares the few there are: proposals pay only where the
queue's ranking is dear (BERTH_QUEUE_PROPOSE=auto; measured on two cores). Beyond, the workers'
extra work runs on cores of their own, and proposing every batch was measured best on sixteen."""


def default_propose(workers: int, cores: int | None = None) -> str:
    """BERTH_QUEUE_PROPOSE when nobody says: one worker alone ranks in the queue (measured faster
    on 2 and 16 cores); more than one propose, on a machine of `SHARED_CORES` or fewer only while
    the queue's ranking is dear."""
    if workers <= 1:
        return "0"
    cores = usable_cores() if cores is None else cores
    return AUTO if cores <= SHARED_CORES else "1"


def default_queues(workers: int, cores: int | None = None) -> int:
    """Queues when nobody says: on a machine of more than `SHARED_CORES` cores, one per filter
    worker, at most `MOST_QUEUES`, as many as can each have whole workers (`queues_problem`); one
    on fewer cores, where every process shares them. On sixteen cores, four workers with four
    queues gave SchedulingBasic and PodAntiAffinity their most pods/s (README, "Queues that share
    the pods")."""
    cores = usable_cores() if cores is None else cores
    return 1 if cores <= SHARED_CORES else most_queues(MOST_QUEUES, workers)


def most_queues(at_most: int, workers: int) -> int:
    """The most queues, up to `at_most`, that can share `workers` filter workers (`queues_problem`)."""
    return max((q for q in range(1, at_most + 1) if not queues_problem(q, workers)),
               default=1)  # no workers: the worker count's own check says why


def workers_most(cores: int | None = None) -> int:
    """The most filter workers worth keeping busy when every service runs on this machine: one
    per core beside the queue's, at least one. On two cores one busy worker and the queue fill the
    machine; a second one only waits for a CPU, and folds the whole log besides (measured:
    `services/queue/dispatch.py`)."""
    cores = usable_cores() if cores is None else cores
    return max(1, cores - 1)


def up_options(filter_workers: int | None, env: Mapping[str, str] | None = None, *,
               queues: int | None = None) -> UpOptions:
    """The cluster's options from a `--filter-workers` flag (None: the machine's default):
    `default_propose`, unless BERTH_QUEUE_PROPOSE says otherwise; the queue keeps at most
    `pipeline_most()` batches at the workers, unless BERTH_QUEUE_PIPELINE_MOST says otherwise,
    and at most `workers_most()` workers busy, unless BERTH_QUEUE_WORKERS_MOST says otherwise;
    `queues` (None: BERTH_QUEUE_PARTITIONS where the environment says, else `default_queues`)."""
    env = os.environ if env is None else env
    workers = default_filter_workers() if filter_workers is None else filter_workers
    if queues is None:
        try:
            queues = env_int(env, "BERTH_QUEUE_PARTITIONS", 0, minimum=1) or default_queues(workers)
        except ConfigurationError as e:
            raise CliError(str(e), 2) from None

    def unless_said(name: str, chosen: Callable[[], T]) -> T | None:
        """None where the environment sets `name` (the queue reads it itself), else `chosen()`."""
        return None if env.get(name, "").strip() else chosen()

    return UpOptions(filter_workers=workers, queues=queues,
                     propose=unless_said("BERTH_QUEUE_PROPOSE", lambda: default_propose(workers)),
                     pipeline_most=unless_said("BERTH_QUEUE_PIPELINE_MOST", pipeline_most),
                     workers_most=unless_said("BERTH_QUEUE_WORKERS_MOST", workers_most))


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    module: str
    replicas: Callable[[UpOptions], int] = field(default=lambda o: 1)
    env: Callable[[UpOptions], dict[str, str]] = field(default=lambda o: {})
    gateway: bool = False
    """The API endpoint `berth.json` points at (one replica)."""
    index_env: str = ""
    """The variable that tells each replica its index ("": none)."""


def queue_env(options: UpOptions) -> dict[str, str]:
    env: dict[str, str] = {}
    if options.propose is not None:
        env["BERTH_QUEUE_PROPOSE"] = options.propose
    if options.pipeline_most is not None:
        env["BERTH_QUEUE_PIPELINE_MOST"] = str(options.pipeline_most)
    if options.workers_most is not None:
        env["BERTH_QUEUE_WORKERS_MOST"] = str(options.workers_most)
    env["BERTH_QUEUE_PARTITIONS"] = str(options.queues)  # as many as run, whatever the environment says
    return env


SERVICES: tuple[ServiceSpec, ...] = (
    ServiceSpec("projector", "services.projector"),
    ServiceSpec("gateway", "services.gateway", gateway=True),
    ServiceSpec("binder", "services.binder"),
    ServiceSpec("filter", "services.filter", replicas=lambda o: o.filter_workers),
    ServiceSpec("preemption", "services.preemption"),
    ServiceSpec("queue", "services.queue", replicas=lambda o: o.queues, env=queue_env,
                index_env="BERTH_QUEUE_PARTITION"),
)


def filter_workers_problem(count: int) -> str:
    """Why `count` filter replicas cannot run ("" when they can): they share the partitions of
    filter-requests, and more than there are would sit idle."""
    if 1 <= count <= NODE_SHARDS:
        return ""
    return f"filter workers must be between 1 and {NODE_SHARDS} (the partitions of filter-requests), got {count}"


def queues_problem(queues: int, workers: int) -> str:
    """Why `queues` queues cannot share `workers` filter workers ("" when they can): each needs a
    partition of its own in `shard-results`, and whole workers of its own (its slice of
    `filter-requests` made of whole runs the range assignor gives the workers), so that no worker
    answers two queues."""
    if not 1 <= queues <= MOST_QUEUES:
        return f"queues must be between 1 and {MOST_QUEUES} (the partitions that answer them), got {queues}"
    if queues > workers:
        return f"{queues} queues need at least as many filter workers, got {workers}"
    if not shares_hold_whole_runs(queues, workers, NODE_SHARDS):
        return (f"{queues} queues cannot each have whole filter workers of {workers} (each worker's partitions "
                f"of filter-requests would fall to two queues): choose queues that divide them evenly")
    return ""


def check_filter_workers(count: int) -> None:
    problem = filter_workers_problem(count)
    if problem:
        raise CliError(f"--filter-workers: {problem}", 2)


def check_queues(queues: int, workers: int) -> None:
    problem = queues_problem(queues, workers)
    if problem:
        raise CliError(f"--queues (or BERTH_QUEUE_PARTITIONS): {problem}", 2)
