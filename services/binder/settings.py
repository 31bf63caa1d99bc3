"""Binder settings: the shared settings plus its consumer group."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from services.runtime.environment import default_group, group_id, service_environment
from shared.events import BINDS, NODES
from shared.settings import Settings

SERVICE = "binder"
GROUP = default_group(SERVICE)


DEFAULT_DELETIONS_CATCH_UP_S = 30.0


@dataclass(frozen=True, slots=True)
class BinderSettings:
    base: Settings
    group_id: str = GROUP
    topics: tuple[str, ...] = (BINDS, NODES)
    """One group over both node-keyed topics: the range assignor gives a member the same partition
    numbers (node shards) of each, so a shard's nodes and its bind requests meet in one member."""
    deletions_catch_up_s: float = DEFAULT_DELETIONS_CATCH_UP_S
    """How long an assignment waits for the `pods` reader to reach the end it saw at start. Past that
    the binder goes on: a deletion it has not read yet only makes it reject, never over-commit."""


def load(env: Mapping[str, str] | None = None) -> BinderSettings:
    env, base = service_environment(SERVICE, env)
    return BinderSettings(base=base, group_id=group_id(SERVICE, env))
