"""Filter worker settings: the shared settings plus its consumer group and scheduler config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from services.runtime.environment import default_group, group_id, service_environment
from services.runtime.scheduler_config import load_scheduler_config
from shared.model.config import KubeSchedulerConfiguration
from shared.settings import Settings

SERVICE = "filter"
GROUP = default_group(SERVICE)


DEFAULT_WATERMARK_WAIT_S = 10.0


@dataclass(frozen=True, slots=True)
class FilterSettings:
    base: Settings
    config: KubeSchedulerConfiguration | None = None
    group_id: str = GROUP
    watermark_wait_s: float = DEFAULT_WATERMARK_WAIT_S
    """How long a request waits for this replica's view to reach the queue's; past that it is
    answered from the view as it is (the binder still refuses anything that does not fit)."""


def load(env: Mapping[str, str] | None = None) -> FilterSettings:
    env, base = service_environment(SERVICE, env)
    return FilterSettings(base=base, config=load_scheduler_config(env),
                          group_id=group_id(SERVICE, env))
