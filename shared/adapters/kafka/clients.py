"""aiokafka producers, consumers and admin clients built from `Settings`.

Tansu (the embedded broker) has no idempotent producer or transactions, and Berth does not need them:
producers are plain `acks=all` at-least-once, consumers commit manually after effects are durable and
deduplicate by event id.

Consumers use the range assignor: for topics with the same partition count (the node-sharded topics)
it gives a member the same partition numbers in each, so a filter replica owning `nodes` partition k
also owns `filter-requests` and `placements` partition k.
"""

from __future__ import annotations

from collections.abc import Iterable

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.coordinator.assignors.range import RangePartitionAssignor

from shared.settings import Settings


def _bootstrap(settings: Settings) -> str:
    return settings.require_endpoints()[0] if settings.kafka_bootstrap_servers is None else settings.kafka_bootstrap_servers


def make_producer(settings: Settings, *, client_id: str | None = None) -> AIOKafkaProducer:
    """A producer that returns from a send only once every in-sync replica has the record."""
    return AIOKafkaProducer(
        bootstrap_servers=_bootstrap(settings),
        client_id=client_id or settings.service_name,
        acks="all",
        enable_idempotence=False,  # no InitProducerId on Tansu; consumers dedupe instead
        linger_ms=settings.kafka_linger_ms,
        request_timeout_ms=30_000,
    )


def make_consumer(
    settings: Settings,
    topics: Iterable[str] = (),
    *,
    group_id: str | None,
    client_id: str | None = None,
    auto_offset_reset: str = "earliest",
) -> AIOKafkaConsumer:
    """A consumer with manual commits; `topics` are physical names (empty: assign partitions yourself)."""
    return AIOKafkaConsumer(
        *topics,
        bootstrap_servers=_bootstrap(settings),
        client_id=client_id or settings.service_name,
        group_id=group_id,
        enable_auto_commit=False,
        auto_offset_reset=auto_offset_reset,
        session_timeout_ms=settings.kafka_session_timeout_ms,
        heartbeat_interval_ms=settings.kafka_heartbeat_ms,
        max_poll_records=settings.kafka_max_poll_records,
        partition_assignment_strategy=(RangePartitionAssignor,),
        isolation_level="read_uncommitted",
    )


def make_admin(settings: Settings) -> AIOKafkaAdminClient:
    return AIOKafkaAdminClient(bootstrap_servers=_bootstrap(settings), client_id=f"{settings.service_name}-admin")
