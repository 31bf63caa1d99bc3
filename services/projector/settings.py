"""Projector settings: the shared settings plus its consumer group and topics."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from shared.events import TOPICS
from shared.settings import Settings, env_str, load_service_settings

SERVICE = "projector"
GROUP = "berth-projector"


@dataclass(frozen=True, slots=True)
class ProjectorSettings:
    base: Settings
    group_id: str = GROUP
    """Positions in `consumer_offsets` are kept per group: a second group projects independently."""
    topics: tuple[str, ...] = tuple(spec.name for spec in TOPICS)


def load(env: Mapping[str, str] | None = None) -> ProjectorSettings:
    env = os.environ if env is None else env
    base = load_service_settings(SERVICE, env)
    return ProjectorSettings(base=base, group_id=env_str(env, "BERTH_PROJECTOR_GROUP", GROUP))
