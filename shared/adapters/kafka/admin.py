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
        wanted = {registry.physical(spec.name): spec.partitions for spec in registry}
        problems = [f"topic {name!r} is missing" for name in wanted if name not in existing]
        present = [name for name in wanted if name in existing]
        if present:
            for described in await admin.describe_topics(present):
                have, need = len(described["partitions"]), wanted[described["topic"]]
                if have != need:
                    problems.append(f"topic {described['topic']!r} has {have} partitions, Berth needs exactly {need}")
    except KafkaError as exc:
        raise BrokerUnavailable(f"checking topics: {type(exc).__name__}: {exc}") from exc
    finally:
        await admin.close()
    if problems:
        raise ConfigurationError("; ".join(problems) + " (run `berth migrate` to create the topics)")


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
    present = [registry.physical(spec.name) for spec in registry if registry.physical(spec.name) in existing]
    if present:
        for described in await admin.describe_topics(present):
            spec = registry.spec(registry.logical(described["topic"]))
            have = len(described["partitions"])
            if have != spec.partitions:
                raise ConfigurationError(
                    f"topic {described['topic']!r} has {have} partitions, Berth needs exactly {spec.partitions}"
                )
    if created:
        log.info("created topics: %s", ", ".join(created))
    return created
