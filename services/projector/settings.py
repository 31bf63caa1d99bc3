"""Projector settings: the shared settings plus its consumer group and topics."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from services.runtime.environment import default_group, group_id, service_environment
from shared.events import TOPICS
from shared.settings import Settings, env_int

SERVICE = "projector"
GROUP = default_group(SERVICE)
BATCH_RECORDS = 2000
FETCH_MIN_BYTES = 512 * 1024


@dataclass(frozen=True, slots=True)
class ProjectorSettings:
    base: Settings
    group_id: str = GROUP
    """Positions in `consumer_offsets` are kept per group: a second group projects independently."""
    topics: tuple[str, ...] = tuple(spec.name for spec in TOPICS)
    batch_records: int = BATCH_RECORDS
    """The most events applied in one transaction."""
    fetch_min_bytes: int = FETCH_MIN_BYTES
    """Bytes a fetch waits for (at most BERTH_KAFKA_FETCH_MAX_WAIT_MS): each transaction has a
    fixed cost, so under load fewer, fuller ones cost the projector and the database less."""


def load(env: Mapping[str, str] | None = None) -> ProjectorSettings:
    env, base = service_environment(SERVICE, env)
    return ProjectorSettings(
        base=base, group_id=group_id(SERVICE, env),
        batch_records=env_int(env, "BERTH_PROJECTOR_BATCH_RECORDS", BATCH_RECORDS, minimum=1),
        fetch_min_bytes=env_int(env, "BERTH_PROJECTOR_FETCH_MIN_BYTES", FETCH_MIN_BYTES, minimum=1))
