"""Preemption settings: the shared settings plus its consumer group and scheduler config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from services.runtime.environment import default_group, group_id, service_environment
from services.runtime.scheduler_config import load_scheduler_config
from shared.model.config import KubeSchedulerConfiguration
from shared.settings import Settings, env_int

SERVICE = "preemption"
GROUP = default_group(SERVICE)
DEFAULT_BATCH = 64
DEFAULT_WATERMARK_WAIT_S = 10.0


@dataclass(frozen=True, slots=True)
class PreemptionSettings:
    base: Settings
    config: KubeSchedulerConfiguration | None = None
    group_id: str = GROUP
    watermark_wait_s: float = DEFAULT_WATERMARK_WAIT_S
    batch_size: int = DEFAULT_BATCH
    """Most requests handled per batch. A batch's evictions and nominations are published when it
    ends, and until this service has folded them back each later decision carries them as its
    overlay."""


def load(env: Mapping[str, str] | None = None) -> PreemptionSettings:
    env, base = service_environment(SERVICE, env)
    return PreemptionSettings(base=base, config=load_scheduler_config(env),
                              group_id=group_id(SERVICE, env),
                              batch_size=env_int(env, "BERTH_PREEMPTION_BATCH", DEFAULT_BATCH, minimum=1))
