"""Reading whole topics without a consumer group: the one way Berth's readers tail the log.

The services' followers, the binder's readers and `berth events` all assign every partition of some
topics to a consumer of their own, start each at an offset they know (the beginning, or where they
stopped), decode each record (one that does not decode was dead-lettered by the services that
consume it in a group; readers skip it or show it), and need to know when the ends that existed
at the start are reached. `Tail` is that, over an aiokafka consumer.

A partition's end comes from the high watermark of the fetch responses, not from ListOffsets:
Tansu answers ListOffsets(latest) with the base offset of a partition's last record batch plus one
(1 for a log written in one 20-record batch), which would end a read early.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, TopicPartition

from shared.errors import DecodeError
from shared.events import Envelope, Position, TopicRegistry, decode


@dataclass(frozen=True, slots=True)
class Record:
    position: Position
    event: Envelope | DecodeError
    raw: bytes


class Tail:
    """Every partition of `topics` (or only `partitions` of them), each from `start(topic,
    partition)`, the beginning by default."""

    def __init__(self, consumer: AIOKafkaConsumer, registry: TopicRegistry, topics: Sequence[str],
                 start: Callable[[str, int], int] = lambda topic, partition: 0, *,
                 partitions: Collection[int] | None = None) -> None:
        self.consumer, self.registry = consumer, registry
        self.partitions = [TopicPartition(registry.physical(t), p)
                           for t in topics for p in range(registry.spec(t).partitions)
                           if partitions is None or p in partitions]
        consumer.assign(self.partitions)
        for tp in self.partitions:
            consumer.seek(tp, start(registry.logical(tp.topic), tp.partition))
        self._unread = set(self.partitions)
        self._paused = False
        self._stopped: set[TopicPartition] = set()

    async def fetch(self, timeout_ms: int) -> list[Record]:
        """One fetch: the records received, each partition's in offset order."""
        batch = await self.consumer.getmany(timeout_ms=timeout_ms)
        out: list[Record] = []
        for tp, messages in batch.items():
            topic = self.registry.logical(tp.topic)
            for message in messages:
                raw = message.value or b""
                event: Envelope | DecodeError
                try:
                    event = decode(raw, topic=topic)
                except DecodeError as exc:
                    event = exc
                out.append(Record(Position(topic, tp.partition, message.offset), event, raw))
        return out

    async def reached_ends(self) -> list[tuple[TopicPartition, int]]:
        """The partitions whose read reached, since the last call, the end their fetches report,
        each with the offset after the last record read."""
        done: list[tuple[TopicPartition, int]] = []
        for tp in sorted(self._unread, key=lambda t: (t.topic, t.partition)):
            high = self.consumer.highwater(tp)
            position = await self.consumer.position(tp)
            if high is not None and position >= high:
                done.append((tp, position))
        self._unread.difference_update(tp for tp, _ in done)
        return done

    async def skip_empty(self) -> None:
        """Count partitions that hold no record as read (no fetch may ever report their end)."""
        ends = await self.consumer.end_offsets(self.partitions)
        self._unread.difference_update(tp for tp in self.partitions if ends[tp] == 0)

    def track_ends(self) -> None:
        """Count every partition as unread again, so that `reached_ends` and `at_end` follow the
        ends of the fetches from now on (a reader catching up again after a pause)."""
        self._unread = set(self.partitions) - self._stopped

    @property
    def at_end(self) -> bool:
        """Whether every partition has reached the end its fetches reported (`reached_ends`)."""
        return not self._unread

    def pause(self) -> None:
        """Fetch nothing from now on (an idle reader's empty fetches still cost the broker)."""
        if not self._paused:
            self.consumer.pause(*self.partitions)
            self._paused = True

    def resume(self) -> None:
        if self._paused:
            self.consumer.resume(*(tp for tp in self.partitions if tp not in self._stopped))
            self._paused = False

    def stop_reading(self, topics: Collection[str]) -> None:
        """Fetch nothing more of these topics (logical names), paused or not."""
        physical = {self.registry.physical(t) for t in topics}
        stopped = [tp for tp in self.partitions if tp.topic in physical]
        self._stopped.update(stopped)
        self._unread.difference_update(stopped)
        if stopped:
            self.consumer.pause(*stopped)
