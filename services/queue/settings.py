"""Queue settings: the shared settings plus how cycles are batched and seeded."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from services.runtime.scheduler_config import load_scheduler_config
from shared.model.config import KubeSchedulerConfiguration
from shared.settings import Settings, env_flag, env_float, env_int, env_str, load_service_settings

from .scheduler import (
    DEFAULT_BATCH,
    DEFAULT_GATHER_TIMEOUT_S,
    DEFAULT_PREEMPTION_TIMEOUT_S,
    DEFAULT_UNSCHEDULABLE_TIMEOUT_S,
)

SERVICE = "queue"
GROUP = "berth-queue"


@dataclass(frozen=True, slots=True)
class QueueSettings:
    base: Settings
    config: KubeSchedulerConfiguration | None = None
    group_id: str = GROUP
    batch_size: int = DEFAULT_BATCH
    """Pods evaluated per scatter/gather round trip."""
    pipeline_depth: int = 0
    """Batches at the filter workers while the one before them is merged and decided; 0: as many as
    keep the queue busy (`DepthGauge`), at most one per filter worker known and `pipeline_most`."""
    pipeline_most: int = 0
    """The most batches at the filter workers at once (0: no bound but the workers known). Where
    every process shares one machine, more than its cores beside the queue's only wait for CPU."""
    lockstep: bool = False
    """One pod in flight at a time, its outcome awaited before the next, with the simulator's
    logical clock: decisions then equal `berth simulate`'s on the same input."""
    seed: int = 0
    propose: bool = False
    """Filter workers decide each batch and answer with a ranking per pod (BERTH_QUEUE_PROPOSE=1);
    off, they answer with the walks (feasible nodes and raw scores) and the queue ranks."""
    gather_timeout_s: float = DEFAULT_GATHER_TIMEOUT_S
    """A scatter with shards still silent after this long is sent again."""
    unschedulable_timeout_s: float = DEFAULT_UNSCHEDULABLE_TIMEOUT_S
    """podMaxInUnschedulablePodsDuration: how long a pod sits unschedulable before a retry."""
    preemption_timeout_s: float = DEFAULT_PREEMPTION_TIMEOUT_S
    """How long a preemptor waits for the preemption service's decision before it goes back to the
    queue (a request that will never be answered: dead-lettered, say)."""


def load(env: Mapping[str, str] | None = None) -> QueueSettings:
    env = os.environ if env is None else env
    return QueueSettings(
        base=load_service_settings(SERVICE, env),
        config=load_scheduler_config(env),
        group_id=env_str(env, "BERTH_QUEUE_GROUP", GROUP),
        batch_size=env_int(env, "BERTH_QUEUE_BATCH", DEFAULT_BATCH, minimum=1),
        pipeline_depth=env_int(env, "BERTH_QUEUE_PIPELINE", 0),
        pipeline_most=env_int(env, "BERTH_QUEUE_PIPELINE_MOST", 0),
        lockstep=env_flag(env, "BERTH_QUEUE_LOCKSTEP"),
        seed=env_int(env, "BERTH_SEED", 0),
        propose=env_flag(env, "BERTH_QUEUE_PROPOSE"),
        unschedulable_timeout_s=env_float(env, "BERTH_UNSCHEDULABLE_TIMEOUT_S", DEFAULT_UNSCHEDULABLE_TIMEOUT_S),
        preemption_timeout_s=env_float(env, "BERTH_PREEMPTION_TIMEOUT_S", DEFAULT_PREEMPTION_TIMEOUT_S),
    )
