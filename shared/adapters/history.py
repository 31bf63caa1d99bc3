"""Where a recorded history comes from: the Postgres event store, the Kafka topics themselves, or a
JSON Lines export (`berth events --export`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from shared.errors import DecodeError, InvalidInput
from shared.events import TOPICS, ReceivedEvent, TopicRegistry
from shared.replay.export_format import export_line, parse_export_line
from shared.replay.history import History
from shared.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine


async def history_from_store(engine: AsyncEngine) -> History:
    from shared.adapters.postgres.event_store import PostgresEventStore

    return History([event async for _, event in PostgresEventStore(engine, page_size=5000).read()])


async def read_log(settings: Settings, registry: TopicRegistry | None = None) -> list[ReceivedEvent]:
    """Every topic read from the beginning, each event once (a broadcast's copies share an id),
    ordered by timestamp (Kafka keeps no order across partitions)."""
    from shared.adapters.kafka import read_topic

    registry = registry or TopicRegistry(settings.topic_prefix)
    events: list[ReceivedEvent] = []
    seen: set[object] = set()
    for spec in TOPICS:
        async for position, decoded, _ in read_topic(settings, spec.name, registry=registry):
            if not isinstance(decoded, DecodeError) and decoded.event_id not in seen:
                seen.add(decoded.event_id)
                events.append(ReceivedEvent(decoded, position))
    events.sort(key=lambda e: e.envelope.timestamp)
    return events


async def history_from_kafka(settings: Settings, registry: TopicRegistry | None = None) -> History:
    return History(await read_log(settings, registry))


async def export_log(settings: Settings, path: str | Path, registry: TopicRegistry | None = None) -> int:
    """Write the whole log as JSON Lines (the format `berth replay --source FILE` reads)."""
    events = await read_log(settings, registry)
    with open(path, "w", encoding="utf-8") as f:
        for event in events:
            f.write(export_line(event) + "\n")
    return len(events)


def history_from_export(path: str | Path) -> History:
    """An export's lines, {"topic", "partition", "offset", "event"}; lines that record a message
    that did not decode ("error") are skipped, as the services skip them. The event is decoded once,
    straight from the line's bytes."""
    events: list[ReceivedEvent] = []
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                event = parse_export_line(line)
            except (msgspec.DecodeError, msgspec.ValidationError, DecodeError) as exc:
                raise InvalidInput(f"{path}:{number}", "event", f"not an exported event: {exc}") from exc
            if event is not None:
                events.append(event)
    events.sort(key=lambda e: e.envelope.timestamp)
    return History(events)
