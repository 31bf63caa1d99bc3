"""Queue settings: the shared settings plus how cycles are batched and seeded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from services.runtime.environment import default_group, group_id, service_environment
from services.runtime.scheduler_config import load_scheduler_config
from shared.model.config import KubeSchedulerConfiguration
from shared.settings import ConfigurationError, Settings, env_flag, env_flag_or_auto, env_float, env_int

from .options import (
    DEFAULT_BATCH,
    DEFAULT_PREEMPTION_TIMEOUT_S,
    DEFAULT_PROPOSE_ABOVE_MS,
    DEFAULT_UNSCHEDULABLE_TIMEOUT_S,
    SchedulerOptions,
)
from .share import QueueShare

SERVICE = "queue"
GROUP = default_group(SERVICE)


@dataclass(frozen=True, slots=True)
class QueueSettings:
    base: Settings
    config: KubeSchedulerConfiguration | None = None
    group_id: str = GROUP
    options: SchedulerOptions = field(default_factory=SchedulerOptions)


def load(env: Mapping[str, str] | None = None) -> QueueSettings:
    env, base = service_environment(SERVICE, env)
    lockstep = env_flag(env, "BERTH_QUEUE_LOCKSTEP")
    share = queue_share(env, lockstep)
    propose = env_flag_or_auto(env, "BERTH_QUEUE_PROPOSE")  # None: auto, while ranking is dear (`ProposalPolicy`)
    options = SchedulerOptions(
        batch_size=env_int(env, "BERTH_QUEUE_BATCH", DEFAULT_BATCH, minimum=1),
        pipeline_depth=env_int(env, "BERTH_QUEUE_PIPELINE", 0),
        pipeline_most=env_int(env, "BERTH_QUEUE_PIPELINE_MOST", 0),
        workers_most=env_int(env, "BERTH_QUEUE_WORKERS_MOST", 0),
        lockstep=lockstep,
        share=share,
        seed=env_int(env, "BERTH_SEED", 0),
        propose=propose is True,
        propose_above_ms=(env_float(env, "BERTH_QUEUE_PROPOSE_ABOVE_MS", DEFAULT_PROPOSE_ABOVE_MS)
                          if propose is None else None),
        unschedulable_timeout_s=env_float(env, "BERTH_UNSCHEDULABLE_TIMEOUT_S", DEFAULT_UNSCHEDULABLE_TIMEOUT_S),
        preemption_timeout_s=env_float(env, "BERTH_PREEMPTION_TIMEOUT_S", DEFAULT_PREEMPTION_TIMEOUT_S),
    )
    group = group_id(SERVICE, env)
    if not share.whole:  # each queue reads its own partitions of the answers, from the start
        group = f"{group}-{share.index}"
    return QueueSettings(base=base, config=load_scheduler_config(env), group_id=group, options=options)


def queue_share(env: Mapping[str, str], lockstep: bool) -> QueueShare:
    """BERTH_QUEUE_PARTITION of BERTH_QUEUE_PARTITIONS (0 of 1: the only queue)."""
    count = env_int(env, "BERTH_QUEUE_PARTITIONS", 1, minimum=1)
    if lockstep and count != 1:
        raise ConfigurationError(f"BERTH_QUEUE_PARTITIONS={count}: BERTH_QUEUE_LOCKSTEP runs one queue")
    index = env_int(env, "BERTH_QUEUE_PARTITION", 0)
    try:
        return QueueShare(index, count)
    except ValueError as e:
        raise ConfigurationError(f"BERTH_QUEUE_PARTITION={index} of BERTH_QUEUE_PARTITIONS={count}: {e}") from None
