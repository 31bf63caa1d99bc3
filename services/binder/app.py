"""The binder service: the runtime's consume loop over `binds` + `nodes`, plus two log readers
without a consumer group: one that reads a shard's partitions back for a rebuild (`KafkaShardLog`)
and one that follows all of `pods` for deletions and evictions (`PodDeletions`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence

from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaError

from services.runtime import Service, ServiceConfig, run_service
from services.runtime.scheduler_config import load_scheduler_config, profiles_from
from services.runtime.tailing import TailTask
from services.runtime.topics import require_topics
from shared.adapters.extender_http import build_extenders
from shared.adapters.kafka import make_consumer
from shared.adapters.kafka.tail import Tail
from shared.binding import anti_affinity_filtered, ignored_by_profile
from shared.errors import BrokerUnavailable
from shared.events import PODS, Envelope, TopicRegistry
from shared.settings import Settings

from .handlers import BinderHandler
from .settings import BinderSettings, load


class KafkaShardLog:
    """Reads partitions of a topic to their current end: from the beginning for a shard rebuild,
    from where the shard's state stopped for a bind whose node is not folded yet."""

    def __init__(self, settings: Settings, registry: TopicRegistry) -> None:
        self.settings, self.registry = settings, registry

    async def read(self, topic: str, partitions: Sequence[int],
                   start: int = 0) -> dict[int, tuple[list[Envelope], int]]:
        """Each partition's decodable events from offset `start` and the offset after the last one
        read (an event that does not decode was dead-lettered when it was consumed live)."""
        consumer = make_consumer(self.settings, group_id=None, client_id=f"{self.settings.service_name}-rebuild")
        try:
            await consumer.start()
            tail = Tail(consumer, self.registry, [topic], lambda _topic, _partition: start, partitions=partitions)
            events: dict[int, list[Envelope]] = {p: [] for p in partitions}
            found: dict[int, tuple[list[Envelope], int]] = {}
            while not tail.at_end:
                for record in await tail.fetch(200):
                    # A partition read to its end is done: records written to it since are handled live.
                    kept = events.get(record.position.partition)
                    if kept is not None and isinstance(record.event, Envelope):
                        kept.append(record.event)
                for tp, end in await tail.reached_ends():
                    found[tp.partition] = (events.pop(tp.partition), end)
            return found
        except KafkaError as exc:
            raise BrokerUnavailable(f"binder: reading {topic} back failed: {exc}") from exc
        finally:
            with contextlib.suppress(Exception):
                await consumer.stop()


class PodDeletions(TailTask):
    """Follows every partition of `pods` from the beginning and hands deletions to `on_event`.

    Read again from the beginning at every start, and after any failure (a binder deaf to deletions
    would only reject more, but for good): the set of deleted uids is the fold of the whole topic,
    forgetting a uid twice changes nothing, and no offsets need keeping. `caught_up` is set once
    the ends seen at start are reached.
    """

    def __init__(self, settings: Settings, registry: TopicRegistry, on_event: Callable[[Envelope], None]) -> None:
        super().__init__(settings, "pods", "reading pods")
        self.registry, self.on_event = registry, on_event
        self.caught_up = asyncio.Event()

    async def follow(self, consumer: AIOKafkaConsumer) -> None:
        tail = Tail(consumer, self.registry, [PODS])
        while True:
            for record in await tail.fetch(500 if self.caught_up.is_set() else 200):
                if isinstance(record.event, Envelope):
                    self.on_event(record.event)
            if not self.caught_up.is_set():
                await tail.reached_ends()
                if tail.at_end:
                    self.caught_up.set()


def build(settings: BinderSettings, *, registry: TopicRegistry | None = None,
          serve_http: bool = True) -> tuple[Service, PodDeletions]:
    """The binder wired to the broker; the caller starts the deletions reader, then runs the service."""
    registry = registry or TopicRegistry(settings.base.topic_prefix)
    scheduler_config = load_scheduler_config()
    profiles = profiles_from(scheduler_config)
    handler = BinderHandler(KafkaShardLog(settings.base, registry), producer=settings.base.service_name,
                            catch_up_timeout_s=settings.deletions_catch_up_s,
                            binders=build_extenders(scheduler_config), ignored=ignored_by_profile(profiles),
                            anti_affinity=anti_affinity_filtered(profiles))
    deletions = PodDeletions(settings.base, registry, handler.pod_gone)
    handler.deletions_caught_up = deletions.caught_up.wait
    config = ServiceConfig(name=settings.base.service_name, group_id=settings.group_id, topics=settings.topics,
                           serve_http=serve_http)
    return Service(settings.base, config, handler, registry=registry), deletions


async def run(service: Service, deletions: PodDeletions) -> None:
    """Run until `service.request_stop()` (or SIGTERM/SIGINT under `main`)."""
    deletions.start()
    try:
        await service.run()
    finally:
        await deletions.stop()


async def main(settings: BinderSettings | None = None) -> None:
    settings = settings or load()
    await require_topics(settings.base)
    service, deletions = build(settings)
    deletions.start()
    try:
        await run_service(service)
    finally:
        await deletions.stop()
