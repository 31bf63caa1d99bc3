"""Topic creation from the topic registry (idempotent: existing topics are checked, not recreated)."""

from __future__ import annotations

import logging

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError

from shared.errors import BrokerUnavailable, ConfigurationError
from shared.events import TopicRegistry
from shared.settings import Settings

from .clients import make_admin

log = logging.getLogger(__name__)
_TOPIC_ALREADY_EXISTS = 36


async def ensure_topics(settings: Settings, registry: TopicRegistry | None = None) -> list[str]:
    """Create every topic of the registry that is missing; return the physical names created.

    An existing topic whose partition count is not the plan's is a ConfigurationError: node-keyed
    topics must be co-partitioned for node sharding to work, and consumers read the plan's partitions
    (events keyed on to any others would never be read).
    """
    registry = registry or TopicRegistry(settings.topic_prefix)
    admin = make_admin(settings)
    try:
        await admin.start()
        return await _ensure(admin, registry, settings.kafka_replication_factor)
    except KafkaError as exc:
        raise BrokerUnavailable(f"creating topics: {type(exc).__name__}: {exc}") from exc
    finally:
        await admin.close()


async def check_topics(settings: Settings, registry: TopicRegistry | None = None) -> None:
    """Raise ConfigurationError naming every topic of the plan that is missing or has another
    partition count than the plan's: a service started on such a broker would wait forever for
    events published elsewhere, or fail each cycle on a partition that does not exist."""
    registry = registry or TopicRegistry(settings.topic_prefix)
    admin = make_admin(settings)
    try:
        await admin.start()
        existing = set(await admin.list_topics())
        problems = [f"topic {registry.physical(spec.name)!r} is missing" for spec in registry
                    if registry.physical(spec.name) not in existing]
        problems += await _partition_problems(admin, registry, existing)
    except KafkaError as exc:
        raise BrokerUnavailable(f"checking topics: {type(exc).__name__}: {exc}") from exc
    finally:
        await admin.close()
    if problems:
        raise ConfigurationError("; ".join(problems) + " (run `berth migrate` to create the topics)")


async def _partition_problems(admin: AIOKafkaAdminClient, registry: TopicRegistry, existing: set[str]) -> list[str]:
    """For each topic of the plan that exists with another partition count than the plan's, why."""
    present = [registry.physical(spec.name) for spec in registry if registry.physical(spec.name) in existing]
    problems: list[str] = []
    if present:
        for described in await admin.describe_topics(present):
            need = registry.spec(registry.logical(described["topic"])).partitions
            have = len(described["partitions"])
            if have != need:
                problems.append(f"topic {described['topic']!r} has {have} partitions, Berth needs exactly {need}")
    return problems


async def _ensure(admin: AIOKafkaAdminClient, registry: TopicRegistry, replication: int) -> list[str]:
    existing = set(await admin.list_topics())
    wanted = [
        NewTopic(registry.physical(spec.name), spec.partitions, replication)
        for spec in registry
        if registry.physical(spec.name) not in existing
    ]
    created: list[str] = []
    if wanted:
        response = await admin.create_topics(wanted)
        for topic, code, message in response.topic_errors:
            if code == 0:
                created.append(topic)
            elif code != _TOPIC_ALREADY_EXISTS:
                raise ConfigurationError(f"cannot create topic {topic!r}: error {code}: {message}")
    problems = await _partition_problems(admin, registry, existing)
    if problems:
        raise ConfigurationError(problems[0])
    if created:
        log.info("created topics: %s", ", ".join(created))
    return created
