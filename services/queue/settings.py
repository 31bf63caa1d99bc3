"""Queue settings: the shared settings plus how cycles are batched and seeded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from services.runtime.environment import default_group, group_id, service_environment
from services.runtime.scheduler_config import load_scheduler_config
from shared.model.config import KubeSchedulerConfiguration
from shared.settings import Settings, env_flag, env_flag_or_auto, env_float, env_int

from .options import (
    DEFAULT_BATCH,
    DEFAULT_PREEMPTION_TIMEOUT_S,
    DEFAULT_PROPOSE_ABOVE_MS,
    DEFAULT_UNSCHEDULABLE_TIMEOUT_S,
    SchedulerOptions,
)

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
    propose = env_flag_or_auto(env, "BERTH_QUEUE_PROPOSE")  # None: auto, while ranking is dear (`ProposalPolicy`)
    options = SchedulerOptions(
        batch_size=env_int(env, "BERTH_QUEUE_BATCH", DEFAULT_BATCH, minimum=1),
        pipeline_depth=env_int(env, "BERTH_QUEUE_PIPELINE", 0),
        pipeline_most=env_int(env, "BERTH_QUEUE_PIPELINE_MOST", 0),
        workers_most=env_int(env, "BERTH_QUEUE_WORKERS_MOST", 0),
        lockstep=env_flag(env, "BERTH_QUEUE_LOCKSTEP"),
        seed=env_int(env, "BERTH_SEED", 0),
        propose=propose is True,
        propose_above_ms=(env_float(env, "BERTH_QUEUE_PROPOSE_ABOVE_MS", DEFAULT_PROPOSE_ABOVE_MS)
                          if propose is None else None),
        unschedulable_timeout_s=env_float(env, "BERTH_UNSCHEDULABLE_TIMEOUT_S", DEFAULT_UNSCHEDULABLE_TIMEOUT_S),
        preemption_timeout_s=env_float(env, "BERTH_PREEMPTION_TIMEOUT_S", DEFAULT_PREEMPTION_TIMEOUT_S),
    )
    return QueueSettings(base=base, config=load_scheduler_config(env), group_id=group_id(SERVICE, env),
                         options=options)
