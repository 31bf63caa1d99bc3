"""Queue settings: the shared settings plus how cycles are batched and seeded."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from services.runtime.scheduler_config import load_scheduler_config
from shared.model.config import KubeSchedulerConfiguration
from shared.settings import Settings, load_service_settings

SERVICE = "queue"


@dataclass(frozen=True, slots=True)
class QueueSettings:
    base: Settings
    config: KubeSchedulerConfiguration | None = None
    group_id: str = "berth-queue"
    batch_size: int = 256
    """Pods evaluated per scatter/gather round trip."""
    pipeline_depth: int = 0
    """Batches at the filter workers while the one before them is merged and decided; 0: one per
    filter worker known (each batch goes to one worker, so that keeps every worker busy)."""
    lockstep: bool = False
    """One pod in flight at a time, its outcome awaited before the next, with the simulator's
    logical clock: decisions then equal `berth simulate`'s on the same input."""
    seed: int = 0
    gather_timeout_s: float = 30.0
    """A scatter with shards still silent after this long is sent again."""
    unschedulable_timeout_s: float = 300.0
    """podMaxInUnschedulablePodsDuration: how long a pod sits unschedulable before a retry."""


def _flag(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


def load(env: Mapping[str, str] | None = None) -> QueueSettings:
    env = os.environ if env is None else env
    base = load_service_settings(SERVICE, env)
    config = load_scheduler_config(env)
    timeout = env.get("BERTH_UNSCHEDULABLE_TIMEOUT_S", "").strip()
    return QueueSettings(
        base=base,
        config=config,
        group_id=env.get("BERTH_QUEUE_GROUP", "").strip() or "berth-queue",
        batch_size=int(env.get("BERTH_QUEUE_BATCH", "256")),
        pipeline_depth=int(env.get("BERTH_QUEUE_PIPELINE", "0")),
        lockstep=_flag(env.get("BERTH_QUEUE_LOCKSTEP", "")),
        seed=int(env.get("BERTH_SEED", "0")),
        unschedulable_timeout_s=float(timeout or 300.0),
    )
