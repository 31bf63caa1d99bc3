"""The consumer-lag gauge (`berth_consumer_lag`): each assigned partition's end as last fetched,
minus the next offset the service handles."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError
from prometheus_client import Gauge

from shared.events import TopicRegistry


class ConsumerLag:
    def __init__(self, gauge: Gauge, service: str, registry: TopicRegistry, interval_s: float) -> None:
        self.gauge, self.service, self.registry = gauge, service, registry
        self.interval_s = interval_s
        """How often every assigned partition's position is asked for (`update`)."""
        self._last = 0.0

    def after_batch(self, consumer: AIOKafkaConsumer, records: dict[TopicPartition, list[Any]]) -> None:
        """Lag of the partitions just handled: known without asking the consumer for positions."""
        held = consumer.assignment()  # one copy per batch: nothing below awaits, so it cannot change
        for tp, messages in records.items():
            high = consumer.highwater(tp) if tp in held else None
            if high is not None and messages:
                self._set(tp, max(0, high - messages[-1].offset - 1))

    async def update(self, consumer: AIOKafkaConsumer) -> None:
        """Every assigned partition's lag, at most once an interval (idle partitions included)."""
        now = time.monotonic()
        if now - self._last < self.interval_s:
            return
        self._last = now
        for tp in consumer.assignment():
            high = _highwater(consumer, tp)
            if high is None:
                continue
            try:
                position = await asyncio.wait_for(consumer.position(tp), 0.2)
            except (TimeoutError, KafkaError):
                continue
            self._set(tp, max(0, high - position))

    def _set(self, tp: TopicPartition, lag: int) -> None:
        self.gauge.labels(self.service, self.registry.logical(tp.topic), str(tp.partition)).set(lag)


def _highwater(consumer: AIOKafkaConsumer, tp: TopicPartition) -> int | None:
    """The partition's end as last fetched; None once it is no longer assigned. A rebalance may
    revoke it while the lag gauge awaits a position, and the client asserts on it then."""
    if tp not in consumer.assignment():
        return None
    return consumer.highwater(tp)
