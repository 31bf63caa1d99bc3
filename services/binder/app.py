"""The binder service: the runtime's consume loop over `binds` + `nodes`, plus two log readers
without a consumer group: one that reads a shard's partitions back for a rebuild (`KafkaShardLog`)
and one that follows all of `pods` for deletions and evictions (`PodDeletions`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from services.runtime import Service, ServiceConfig, run_service
from services.runtime.scheduler_config import load_scheduler_config, profiles_from
from services.runtime.topics import require_topics
from shared.adapters.extender_http import build_extenders
from shared.adapters.kafka import make_consumer
from shared.binding import ignored_by_profile
from shared.errors import BrokerUnavailable, DecodeError
from shared.events import PODS, Envelope, TopicRegistry, decode
from shared.settings import Settings

from .handlers import BinderHandler
from .settings import BinderSettings, load

log = logging.getLogger(__name__)


class KafkaShardLog:
    """Reads partitions of a topic from the beginning to their current end (a shard rebuild)."""

    def __init__(self, settings: Settings, registry: TopicRegistry) -> None:
        self.settings, self.registry = settings, registry

    async def read(self, topic: str, partitions: Sequence[int]) -> dict[int, tuple[list[Envelope], int]]:
        consumer = make_consumer(self.settings, group_id=None, client_id=f"{self.settings.service_name}-rebuild")
        try:
            await consumer.start()
            physical = self.registry.physical(topic)
            found: dict[int, tuple[list[Envelope], int]] = {}
            async for tp, events, end in read_to_end(consumer, [TopicPartition(physical, p) for p in partitions],
                                                     topic):
                found[tp.partition] = (events, end)
            return found
        except KafkaError as exc:
            raise BrokerUnavailable(f"binder: reading {topic} back failed: {exc}") from exc
        finally:
            with contextlib.suppress(Exception):
                await consumer.stop()


async def read_to_end(consumer: AIOKafkaConsumer, tps: Sequence[TopicPartition], topic: str,
                      on_event: Callable[[Envelope], None] | None = None,
                      ) -> AsyncIterator[tuple[TopicPartition, list[Envelope], int]]:
    """Read `tps` from the beginning until each reaches the high watermark its fetches report;
    yields each partition once done: its decodable events (none kept when `on_event` takes them)
    and the offset after the last one read.

    The end comes from the fetch responses, not ListOffsets: Tansu answers ListOffsets(latest)
    with the base offset of a partition's last record batch plus one (1 for a log written in one
    20-record batch), which would end a rebuild early and let the binder over-commit.
    """
    consumer.assign(list(tps))
    await consumer.seek_to_beginning(*tps)
    found: dict[TopicPartition, list[Envelope]] = {tp: [] for tp in tps}
    remaining = set(tps)
    while remaining:
        batch = await consumer.getmany(*remaining, timeout_ms=200)
        for tp, messages in batch.items():
            for message in messages:
                with contextlib.suppress(DecodeError):  # dead-lettered when it was consumed live
                    event = decode(message.value or b"", topic=topic)
                    if on_event is None:
                        found[tp].append(event)
                    else:
                        on_event(event)
        for tp in sorted(remaining, key=lambda t: t.partition):
            high = consumer.highwater(tp)
            position = await consumer.position(tp)
            if high is not None and position >= high:
                remaining.discard(tp)
                yield tp, found.pop(tp), position


class PodDeletions:
    """Follows every partition of `pods` from the beginning and hands deletions to `on_event`.

    Read again from the beginning at every start: the set of deleted uids is the fold of the whole
    topic, and no offsets need keeping. `caught_up` is set once the ends seen at start are reached.
    """

    def __init__(self, settings: Settings, registry: TopicRegistry, on_event: Callable[[Envelope], None]) -> None:
        self.settings, self.registry, self.on_event = settings, registry, on_event
        self.caught_up = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            consumer = make_consumer(self.settings, group_id=None, client_id=f"{self.settings.service_name}-pods")
            try:
                await consumer.start()
                await self._follow(consumer)
            except Exception as exc:
                # Never die quietly: a binder deaf to deletions would only reject more, but for good.
                # Folding from the beginning again is harmless: forgetting a uid twice changes nothing.
                log.warning("binder: reading pods failed (%s); starting over", exc)
                await asyncio.sleep(1.0)
            finally:
                with contextlib.suppress(Exception):
                    await consumer.stop()

    async def _follow(self, consumer: AIOKafkaConsumer) -> None:
        physical = self.registry.physical(PODS)
        tps = [TopicPartition(physical, p) for p in range(self.registry.spec(PODS).partitions)]
        async for _ in read_to_end(consumer, tps, PODS, self.on_event):
            pass
        self.caught_up.set()
        while True:
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                for message in messages:
                    with contextlib.suppress(DecodeError):
                        self.on_event(decode(message.value or b"", topic=PODS))


def build(settings: BinderSettings, *, registry: TopicRegistry | None = None,
          serve_http: bool = True) -> tuple[Service, PodDeletions]:
    """The binder wired to the broker; the caller starts the deletions reader, then runs the service."""
    registry = registry or TopicRegistry(settings.base.topic_prefix)
    scheduler_config = load_scheduler_config()
    handler = BinderHandler(KafkaShardLog(settings.base, registry), producer=settings.base.service_name,
                            catch_up_timeout_s=settings.deletions_catch_up_s,
                            binders=build_extenders(scheduler_config),
                            ignored=ignored_by_profile(profiles_from(scheduler_config)))
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
