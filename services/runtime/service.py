"""The service runtime: the one consume loop every Berth service runs.

    service = Service(settings, ServiceConfig(name="binder", group_id="berth-binder", topics=["binds"]), handler)
    await service.run()          # until SIGTERM/SIGINT (see `run_service`) or `service.request_stop()`

One task fetches a batch, hands it through `BatchPipeline` (decode → dedupe → handle → publish →
commit), updates the lag gauges, and goes again. On a rebalance the handler hears which partitions it
gained or lost; if it keeps its own positions (the projector), the consumer seeks there first.

aiokafka rebalances eagerly: `on_revoked` hears every partition the replica held and `on_assigned`
the complete new assignment, even for partitions it keeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import KafkaError

from shared.adapters.kafka import KafkaPublisher, make_consumer, make_producer, stop_consumer
from shared.adapters.kafka.clients import member_id_of, physical_group
from shared.errors import BrokerUnavailable, is_retriable
from shared.events import TopicRegistry
from shared.memory import settle_heap
from shared.ports import Publisher
from shared.ports import TopicPartition as LogicalTP
from shared.settings import Settings

from .dedupe import RecentEvents
from .handler import Handler
from .http import HealthServer
from .lag import ConsumerLag
from .loop import BatchPipeline, RetryPolicy, Stopping
from .membership import evict_predecessor, forget_member, remember_member
from .metrics import RuntimeMetrics
from .port_file import announce_port

log = logging.getLogger(__name__)


@dataclass
class ServiceConfig:
    name: str
    group_id: str
    topics: Sequence[str]
    """Logical topic names to consume."""
    fetch_timeout_ms: int = 200
    max_records: int | None = None
    """The most records handled as one batch (None: whatever a fetch returns)."""
    fetch_min_bytes: int = 1
    """Bytes a fetch waits for, up to the fetch wait: a handler whose batch has a fixed cost (a
    transaction) does better with fuller batches than with every record at once."""
    dedupe_capacity: int = 50_000
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    serve_http: bool = True
    lag_interval_s: float = 1.0
    tick_interval_s: float | None = None
    """How often to call `Handler.tick` (None: never)."""
    reads: Callable[[str, int], bool] | None = None
    """Of the partitions assigned, whether to fetch (logical topic, partition); the others stay
    paused (None: all). A queue that shares the cluster reads only its own answers."""
    rest: Rest | None = None
    """When to stop polling while nothing comes (None: never; `shared.protocol.resting`)."""


@dataclass(frozen=True, slots=True)
class Rest:
    """A consumer that fetched nothing for `after_s` (`first_after_s` while nothing came since it
    started) fetches nothing for `pace_s`, looks once (a fetch timeout: two of the broker's fetch
    waits), and rests again until records come. A record waits up to about two rests more (one
    that a look's last fetch brings back after the look ended is handed over after the next rest),
    and with a 1 s rest the consumer and the broker are spared about five fetches in six."""

    after_s: float
    pace_s: float
    first_after_s: float

    def due(self, idle_since: float, now: float, *, fetched: bool) -> bool:
        """Whether to rest now, idle since `idle_since`; `fetched`: records came since the start."""
        return now - idle_since >= (self.after_s if fetched else self.first_after_s)


class RebalanceFailed(Exception):
    """A rebalance callback (the handler's positions, or its set-up of the partitions) failed: the
    service stopped rather than consume partitions its handler is not ready for."""


class _Listener(ConsumerRebalanceListener):
    def __init__(self, service: Service) -> None:
        self._service = service

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self._service._rebalance_step("revoking", self._service._revoked, revoked)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        await self._service._rebalance_step("assigning", self._service._assigned, assigned)


class Service:
    def __init__(
        self,
        settings: Settings,
        config: ServiceConfig,
        handler: Handler,
        *,
        registry: TopicRegistry | None = None,
        publisher: Publisher | None = None,
    ) -> None:
        self.settings, self.config, self.handler = settings, config, handler
        self.registry = registry or TopicRegistry(settings.topic_prefix)
        self.metrics = RuntimeMetrics(config.name)
        self.lag = ConsumerLag(self.metrics.lag, config.name, self.registry, config.lag_interval_s)
        self.recent = RecentEvents(config.dedupe_capacity)
        self._stop = asyncio.Event()
        self.ready = asyncio.Event()
        """Set once the consumer joined its group and received its first assignment."""
        self.assignment: list[LogicalTP] = []
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._publisher = publisher
        self._processing = asyncio.Lock()
        self._running = False
        self._last_tick = 0.0
        self._failed: BaseException | None = None
        """A rebalance step that failed: the service stops, and `run` raises it."""
        self.http: HealthServer | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    def request_stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        """Start, consume until asked to stop, then shut down cleanly (leave the group, flush)."""
        try:
            await self.start()
            await self._consume()
        finally:
            await self.shutdown()
        if self._failed is not None:
            raise RebalanceFailed(f"{self.config.name}: {self._failed}") from self._failed

    async def start(self) -> None:
        try:
            if self._publisher is None:
                self._producer = make_producer(self.settings, client_id=self.config.name)
                await self._producer.start()
                self._publisher = KafkaPublisher(self._producer, self.registry,
                                                 max_record_bytes=self.settings.kafka_max_message_bytes)
            await evict_predecessor(self.settings, physical_group(self.settings, self.config.group_id))
            self._consumer = make_consumer(self.settings, group_id=self.config.group_id, client_id=self.config.name,
                                           fetch_min_bytes=self.config.fetch_min_bytes)
            await self._consumer.start()
        except KafkaError as exc:
            raise BrokerUnavailable(f"{self.config.name}: cannot connect to Kafka: {exc}") from exc
        self._consumer.subscribe(topics=[self.registry.physical(t) for t in self.config.topics],
                                 listener=_Listener(self))
        if self.config.serve_http:
            self.http = HealthServer(
                host=self.settings.http_host, port=self.settings.http_port, registry=self.metrics.registry,
                live=lambda: self._running, ready=self.ready.is_set, describe=self._describe,
            )
            await self.http.start()
            assert self.http.port is not None
            announce_port(self.settings, self.http.port)
            log.info("%s: health and metrics on %s", self.config.name, self.http.url)
        self._running = True

    async def shutdown(self) -> None:
        self._running = False
        for close in (self._consumer_stop, self._producer_stop, self._http_stop):
            with contextlib.suppress(Exception):
                await close()

    async def _consumer_stop(self) -> None:
        if self._consumer is not None:
            await stop_consumer(self._consumer)  # leaves the group: the partitions move on at once
            self._consumer = None
            forget_member(self.settings)

    async def _producer_stop(self) -> None:
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None

    async def _http_stop(self) -> None:
        if self.http is not None:
            await self.http.stop()

    # --- the loop -----------------------------------------------------------------------------

    async def _consume(self) -> None:
        assert self._consumer is not None and self._publisher is not None
        consumer = self._consumer
        pipeline = BatchPipeline(
            service=self.config.name, group_id=self.config.group_id, handler=self.handler,
            publisher=self._publisher, registry=self.registry, metrics=self.metrics, recent=self.recent,
            retry=self.config.retry, stopping=self._stop,
        )
        stop_wait = asyncio.ensure_future(self._stop.wait())
        idle_since, fetched = time.monotonic(), False
        try:
            while not self._stop.is_set():
                rest = self.config.rest
                if rest is not None and rest.due(idle_since, time.monotonic(), fetched=fetched):
                    await self._rest(consumer, stop_wait, rest.pace_s)
                    if self._stop.is_set():
                        break
                fetch = asyncio.ensure_future(consumer.getmany(timeout_ms=self.config.fetch_timeout_ms,
                                                             max_records=self.config.max_records))
                await asyncio.wait({fetch, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
                if not fetch.done():
                    fetch.cancel()
                    with contextlib.suppress(asyncio.CancelledError, KafkaError):
                        await fetch
                    break
                try:
                    records = fetch.result()
                except KafkaError as exc:
                    # The client reconnects by itself; back off so a dead broker is not hammered.
                    self.metrics.retries.labels(self.config.name, "fetch").inc()
                    log.warning("%s: fetch failed (%s); retrying", self.config.name, exc)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(stop_wait), self.config.retry.maximum)
                    continue
                if records:
                    started = time.perf_counter()
                    async with self._processing:
                        try:
                            await pipeline.process(consumer, records)
                        except Stopping:
                            break
                    idle_since, fetched = time.monotonic(), True  # idle from the end of the batch
                    self.metrics.batch_seconds.labels(self.config.name).observe(time.perf_counter() - started)
                    self.lag.after_batch(consumer, records)
                if not await self._tick(pipeline):
                    break
                await self.lag.update(consumer)
        finally:
            stop_wait.cancel()
            self._running = False

    async def _rest(self, consumer: AIOKafkaConsumer, stop_wait: asyncio.Future[Any], pace_s: float) -> None:
        """Fetch nothing for `pace_s` (or until asked to stop): the partitions being read are
        paused meanwhile, and those still assigned after it read again. Records a fetch in flight
        brings for a paused partition are kept by the client and handed over once it reads again
        (`getmany` is not called while they are paused, which would drop them). A stop leaves
        them paused: a rebalance step that failed paused every partition on purpose."""
        resting = [tp for tp in consumer.assignment() if tp not in consumer.paused()]
        consumer.pause(*resting)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(stop_wait), pace_s)
        finally:
            if not self._stop.is_set():
                assigned = consumer.assignment()  # a rebalance meanwhile assigns afresh, unpaused
                consumer.resume(*(tp for tp in resting if tp in assigned))
        self.metrics.rests.labels(self.config.name).inc()

    async def _tick(self, pipeline: BatchPipeline) -> bool:
        """Run the handler's timer work when due; False when the service is stopping."""
        interval = self.config.tick_interval_s
        now = time.monotonic()
        if interval is None or now - self._last_tick < interval:
            return True
        self._last_tick = now
        async with self._processing:
            try:
                await pipeline.tick()
            except Stopping:
                return False
        return True

    # --- rebalancing --------------------------------------------------------------------------

    def _logical(self, tps: set[TopicPartition]) -> list[LogicalTP]:
        return sorted((self.registry.logical(tp.topic), tp.partition) for tp in tps)

    async def _rebalance_step(self, what: str, step: Callable[[set[TopicPartition]], Awaitable[None]],
                              partitions: set[TopicPartition]) -> None:
        """Run a rebalance callback; if it fails, consume nothing more and stop. The client logs a
        callback's failure and consumes on: from the group's offsets, not the handler's own, with
        the handler's state not set up for the partitions."""
        try:
            await step(partitions)
        except Exception as exc:
            if self._consumer is not None:
                self._consumer.pause(*self._consumer.assignment())
            if self._stop.is_set():
                return  # stopping already (a step gives up its retries then): no failure of its own
            log.exception("%s: %s partitions failed; stopping", self.config.name, what)
            self._failed = exc
            self._stop.set()

    async def _revoked(self, revoked: set[TopicPartition]) -> None:
        # Let a batch in flight finish (and commit) before the partitions move.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._processing.acquire(), self.settings.kafka_session_timeout_ms / 2000)
            self._processing.release()
        partitions = self._logical(revoked)
        for topic, partition in partitions:
            self.recent.forget_partition(topic, partition)
            with contextlib.suppress(KeyError):
                self.metrics.lag.remove(self.config.name, topic, str(partition))
        if partitions:
            await self.handler.on_revoked(partitions)

    async def _assigned(self, assigned: set[TopicPartition]) -> None:
        assert self._consumer is not None
        partitions = self._logical(assigned)
        stored = await self._stored_positions(partitions) if partitions else {}
        for (topic, partition), offset in stored.items():
            self._consumer.seek(TopicPartition(self.registry.physical(topic), partition), offset)
        self.assignment = self._logical(self._consumer.assignment())
        if self.config.reads is not None:
            self._consumer.pause(*(tp for tp in self._consumer.assignment()
                                   if not self.config.reads(self.registry.logical(tp.topic), tp.partition)))
        remember_member(self.settings, physical_group(self.settings, self.config.group_id),
                        member_id_of(self._consumer))
        self.metrics.rebalances.labels(self.config.name).inc()
        self.metrics.assigned.labels(self.config.name).set(len(self.assignment))
        if partitions:
            await self.handler.on_assigned(partitions)
        log.info("%s: assigned %d partitions (%d positions from the handler)", self.config.name,
                 len(partitions), len(stored))
        self.ready.set()

    async def _stored_positions(self, partitions: list[LogicalTP]) -> dict[LogicalTP, int]:
        """The handler's own positions, retried while its store is unavailable: seeking to the wrong
        place would make the handler see (harmless) redeliveries or, worse, nothing at all."""
        attempt = 0
        while True:
            try:
                return await self.handler.positions(partitions)
            except Exception as exc:
                if not is_retriable(exc) or self._stop.is_set():
                    raise
                attempt += 1
                self.metrics.retries.labels(self.config.name, "positions").inc()
                log.warning("%s: reading stored positions failed (%s); retry %d", self.config.name, exc, attempt)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), self.config.retry.delay(attempt))

    def _describe(self) -> dict[str, Any]:
        return {"service": self.config.name, "group": self.config.group_id, "partitions": len(self.assignment)}


async def run_service(service: Service) -> None:
    """Run `service` until SIGTERM or SIGINT, then stop gracefully (finish the batch, leave the group)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, service.request_stop)
    settle_heap()
    try:
        await service.run()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
