"""Topics are created as the plan says; an existing topic with another partition count is refused,
naming the topic and the count (consumers read the plan's partitions, so events keyed on to any
others would never be read)."""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import replace

import pytest
from aiokafka.admin import NewTopic

from shared.adapters.kafka import ensure_topics, make_admin
from shared.errors import ConfigurationError
from shared.events import NODES, TopicRegistry

from .fixtures import BerthTestEnv

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("wrong", [2, 16])
async def test_an_existing_topic_with_another_partition_count_is_refused(berth_env: BerthTestEnv, wrong: int) -> None:
    prefix = f"p{uuid.uuid4().hex[:10]}."
    settings = replace(berth_env.settings, topic_prefix=prefix)
    registry = TopicRegistry(prefix)
    planned = registry.spec(NODES).partitions
    assert wrong != planned
    admin = make_admin(settings)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(registry.physical(NODES), wrong, 1)])
        with pytest.raises(ConfigurationError,
                           match=f"{prefix}nodes' has {wrong} partitions, Berth needs exactly {planned}"):
            await ensure_topics(settings, registry)
    finally:
        with contextlib.suppress(Exception):
            await admin.delete_topics(registry.physical_names())
        await admin.close()


async def test_every_topic_is_created_with_the_plans_partitions(berth_env: BerthTestEnv) -> None:
    admin = make_admin(berth_env.settings)
    await admin.start()
    try:
        described = await admin.describe_topics(berth_env.registry.physical_names())
    finally:
        await admin.close()
    have = {berth_env.registry.logical(d["topic"]): len(d["partitions"]) for d in described}
    assert have == {spec.name: spec.partitions for spec in berth_env.registry}
