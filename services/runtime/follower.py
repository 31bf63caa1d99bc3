"""Follows whole topics without a consumer group and folds every event into a `ClusterView`.

Every scheduling service (queue, filter workers, preemption) needs the whole cluster, not a shard
of it: PreFilter's topology counts span every node. Each reads `nodes`, `pods` and `placements`
from the beginning at start (the view is the fold of the log, so nothing needs storing) and then
follows them. `caught_up` is set once the ends seen at start are reached; `wait_reached` lets a
handler wait until the view has folded what the sender of a request had (its watermark).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition

from shared.adapters.kafka import make_consumer
from shared.cluster import ClusterView
from shared.errors import DecodeError
from shared.events import Envelope, Position, TopicRegistry, decode
from shared.settings import Settings

log = logging.getLogger(__name__)


class LogFollower:
    def __init__(self, settings: Settings, registry: TopicRegistry, topics: Sequence[str], view: ClusterView,
                 on_event: Callable[[Envelope, Position], None] | None = None) -> None:
        self.settings, self.registry, self.topics, self.view = settings, registry, list(topics), view
        self.on_event = on_event
        self.caught_up = asyncio.Event()
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def wait_reached(self, watermark: Mapping[str, list[int]], timeout: float) -> bool:
        """True once the view has folded up to `watermark`; False after `timeout` seconds."""
        if self.view.reached(watermark):
            return True
        async with self._changed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait_for(lambda: self.view.reached(watermark)), timeout)
        return self.view.reached(watermark)

    async def _run(self) -> None:
        while True:
            consumer = make_consumer(self.settings, group_id=None, client_id=f"{self.settings.service_name}-follow")
            try:
                await consumer.start()
                await self._follow(consumer)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # Start over from the beginning: the fold skips what it has folded (positions).
                log.warning("%s: following the log failed (%s); starting over", self.settings.service_name, exc)
                await asyncio.sleep(1.0)
            finally:
                with contextlib.suppress(Exception):
                    await consumer.stop()

    async def _follow(self, consumer: AIOKafkaConsumer) -> None:
        tps = [TopicPartition(self.registry.physical(t), p)
               for t in self.topics for p in range(self.registry.spec(t).partitions)]
        consumer.assign(tps)
        for tp in tps:
            done = self.view.positions.get(self.registry.logical(tp.topic), {}).get(tp.partition, 0)
            consumer.seek(tp, done)
        remaining = set(tps)
        while True:
            batch = await consumer.getmany(timeout_ms=200)
            for tp, messages in batch.items():
                topic = self.registry.logical(tp.topic)
                for message in messages:
                    position = Position(topic, tp.partition, message.offset)
                    try:
                        env = decode(message.value or b"", topic=topic)
                    except DecodeError:
                        self.view.positions.setdefault(topic, {})[tp.partition] = message.offset + 1
                        continue  # dead-lettered by the services that consume it in a group
                    self.view.apply(env, position)
                    if self.on_event is not None:
                        self.on_event(env, position)
            if remaining:
                # The end comes from fetch high watermarks (Tansu's ListOffsets is short after batches).
                for tp in list(remaining):
                    high = consumer.highwater(tp)
                    if high is not None and await consumer.position(tp) >= high:
                        remaining.discard(tp)
                if not remaining:
                    self.caught_up.set()
            if batch:
                async with self._changed:
                    self._changed.notify_all()
