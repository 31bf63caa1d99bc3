"""aiokafka producers, consumers and admin clients built from `Settings`.

Tansu (the embedded broker) has no idempotent producer or transactions, and Berth does not need them:
producers are plain `acks=all` at-least-once, consumers commit manually after effects are durable and
deduplicate by event id.

Consumers use the range assignor: for topics with the same partition count (the node-sharded topics)
it gives a member the same partition numbers in each, so a filter replica owning `nodes` partition k
also owns `filter-requests` and `placements` partition k.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.client import AIOKafkaClient, CoordinationType
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.errors import KafkaError
from aiokafka.protocol.group import JoinGroupRequest, LeaveGroupRequest

from shared.settings import Settings

log = logging.getLogger(__name__)


def _bootstrap(settings: Settings) -> str:
    if settings.kafka_bootstrap_servers is None:
        return settings.require_endpoints()[0]
    return settings.kafka_bootstrap_servers


def make_producer(settings: Settings, *, client_id: str | None = None) -> AIOKafkaProducer:
    """A producer that returns from a send only once every in-sync replica has the record."""
    return AIOKafkaProducer(
        bootstrap_servers=_bootstrap(settings),
        client_id=client_id or settings.service_name,
        acks="all",
        enable_idempotence=False,  # no InitProducerId on Tansu; consumers dedupe instead
        linger_ms=settings.kafka_linger_ms,
        request_timeout_ms=30_000,
        max_request_size=settings.kafka_max_message_bytes,
        max_batch_size=min(settings.kafka_max_batch_bytes, settings.kafka_max_message_bytes),
    )


def make_consumer(
    settings: Settings,
    topics: Iterable[str] = (),
    *,
    group_id: str | None,
    client_id: str | None = None,
    auto_offset_reset: str = "earliest",
    fetch_min_bytes: int = 1,
) -> AIOKafkaConsumer:
    """A consumer with manual commits; `topics` are physical names (empty: assign partitions yourself).
    `fetch_min_bytes`: the broker holds a fetch until that much is there (or the fetch wait passed)."""
    return AIOKafkaConsumer(
        *topics,
        bootstrap_servers=_bootstrap(settings),
        client_id=client_id or settings.service_name,
        group_id=physical_group(settings, group_id) if group_id else None,
        enable_auto_commit=False,
        auto_offset_reset=auto_offset_reset,
        session_timeout_ms=settings.kafka_session_timeout_ms,
        heartbeat_interval_ms=settings.kafka_heartbeat_ms,
        max_poll_records=settings.kafka_max_poll_records,
        fetch_max_wait_ms=settings.kafka_fetch_max_wait_ms,
        fetch_min_bytes=fetch_min_bytes,
        max_partition_fetch_bytes=settings.kafka_max_message_bytes,
        fetch_max_bytes=max(52_428_800, settings.kafka_max_message_bytes),
        partition_assignment_strategy=(RangePartitionAssignor,),
        isolation_level="read_uncommitted",
    )


def physical_group(settings: Settings, group_id: str) -> str:
    """Consumer groups carry the topic prefix too: two Berth clusters sharing a broker (one prefix
    each) must not share a group, or each rebalance would wait on the other's members."""
    return f"{settings.topic_prefix}{group_id}"


def make_admin(settings: Settings) -> AIOKafkaAdminClient:
    return AIOKafkaAdminClient(bootstrap_servers=_bootstrap(settings), client_id=f"{settings.service_name}-admin")


async def stop_consumer(consumer: AIOKafkaConsumer) -> None:
    """Stop a consumer so that its group rebalances at once, on Tansu too.

    Tansu numbers a group's first generation 0, and aiokafka only sends LeaveGroup for a generation
    above 0; a member stopped during generation 0 would then hold its partitions until its session
    times out. So the LeaveGroup is sent here for that case, after the consumer stopped (no heartbeat
    left to race with), over a short-lived client of its own.
    """
    coordinator = getattr(consumer, "_coordinator", None)
    group_id = getattr(coordinator, "group_id", None)
    member_id = getattr(coordinator, "member_id", JoinGroupRequest.UNKNOWN_MEMBER_ID)
    missed_leave = getattr(coordinator, "generation", None) == 0 and member_id != JoinGroupRequest.UNKNOWN_MEMBER_ID
    bootstrap = getattr(getattr(consumer, "_client", None), "_bootstrap_servers", None)
    await consumer.stop()
    if missed_leave and group_id and bootstrap:
        await leave_group(bootstrap, group_id, member_id)


def member_id_of(consumer: AIOKafkaConsumer) -> str | None:
    """The member id the group coordinator gave the consumer (None before it joined)."""
    member_id = getattr(getattr(consumer, "_coordinator", None), "member_id", JoinGroupRequest.UNKNOWN_MEMBER_ID)
    return None if member_id == JoinGroupRequest.UNKNOWN_MEMBER_ID else str(member_id)


async def leave_group(bootstrap: str | list[str], group_id: str, member_id: str) -> bool:
    """Take `member_id` out of the (physical) group, over a short-lived client of its own: for a
    member that stopped without leaving, or one that died. True when the coordinator agreed."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap, client_id="berth-leave-group")
    try:
        await client.bootstrap()
        node = await client.coordinator_lookup(CoordinationType.GROUP, group_id)
        response = await client.send(node, LeaveGroupRequest(group_id, member_id))
        return getattr(response, "error_code", 1) == 0
    except KafkaError as exc:
        log.info("LeaveGroup of %s from %s failed (%s); its session timeout will free its partitions",
                 member_id, group_id, exc)
        return False
    finally:
        await client.close()
