"""The queue service: a log follower feeding the scheduler (cluster events, in-flight binds, attempt
counts), the runtime's consume loop over `shard-results` and `preemption`, and the scheduling loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from services.runtime import Handler, Service, ServiceConfig, run_service
from services.runtime.follower import LogFollower
from services.runtime.scheduler_config import profiles_from
from services.runtime.topics import require_topics
from shared.adapters.extender_http import build_extenders
from shared.adapters.kafka import KafkaPublisher, make_producer
from shared.cluster import ClusterView
from shared.events import BINDS, DECISIONS, PREEMPTION, SHARD_RESULTS, TopicRegistry
from shared.memory import settle_heap

from .gather import Gatherer
from .handlers import QueueHandler
from .metrics import SchedulerMetrics
from .scheduler import FOLLOWED, Scheduler
from .settings import QueueSettings, load

log = logging.getLogger(__name__)


STOP_GRACE_S = 3.0


class QueueApp:
    def __init__(self, settings: QueueSettings, *, registry: TopicRegistry | None = None,
                 serve_http: bool = True) -> None:
        self.settings = settings
        self.registry = registry or TopicRegistry(settings.base.topic_prefix)
        self.producer = make_producer(settings.base, client_id=settings.base.service_name)
        self.publisher = KafkaPublisher(self.producer, self.registry,
                                        max_record_bytes=settings.base.kafka_max_message_bytes)
        self.view = ClusterView()
        share = settings.options.share
        self.gatherer = Gatherer(workers_most=settings.options.workers_most, destinations=share.filter_partitions())
        config = ServiceConfig(name=settings.base.service_name, group_id=settings.group_id,
                               topics=[SHARD_RESULTS, PREEMPTION], serve_http=serve_http, fetch_timeout_ms=20,
                               reads=share.reads)
        self.service = Service(settings.base, config, Handler(), registry=self.registry, publisher=self.publisher)
        self.scheduler = Scheduler(
            self.view, profiles_from(settings.config, self.service.metrics.registry),
            self.gatherer, self.publisher.publish,
            SchedulerMetrics(self.service.metrics.registry), settings.options, config=settings.config,
            extenders=build_extenders(settings.config), producer=settings.base.service_name)
        # The scheduler needs the service's metrics registry, so its handler is installed second.
        self.service.handler = QueueHandler(self.gatherer, self.scheduler)
        # `binds` and `decisions` are read only to rebuild what the queue wrote there before it went
        # live (assumptions, attempt counts, admissions asked); from then on it holds that itself.
        # A bind of another scheduler's pod asked through the API counts once it is bound
        # (placements), as kube-scheduler's cache counts a pod another scheduler bound.
        self.follower = LogFollower(settings.base, self.registry, FOLLOWED, self.view, self.scheduler.on_event,
                                    until_caught_up=(BINDS, DECISIONS))
        self.scheduler.gate = self.follower
        self._stopping = asyncio.Event()

    def request_stop(self) -> None:
        self._stopping.set()
        self.service.request_stop()

    async def run(self, *, signals: bool = False) -> None:
        await self.producer.start()
        self.follower.start()
        consume = asyncio.ensure_future(run_service(self.service) if signals else self.service.run())
        loop = asyncio.ensure_future(self._schedule())
        try:
            await asyncio.wait([consume, loop], return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._stopping.set()
            self.service.request_stop()
            # A cycle under way may finish, so its decisions are published whole; one still
            # waiting on the shards (whose answers no longer arrive) is cancelled.
            await asyncio.wait([loop], timeout=STOP_GRACE_S)
            loop.cancel()
            for task in (consume, loop):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await self.follower.stop()
            with contextlib.suppress(Exception):
                await self.producer.stop()

    async def _schedule(self) -> None:
        caught_up = asyncio.ensure_future(self.follower.caught_up.wait())
        stop = asyncio.ensure_future(self._stopping.wait())
        await asyncio.wait([caught_up, stop], return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if self._stopping.is_set():
            return
        await self.service.ready.wait()
        self.scheduler.start_live()
        log.info("queue: caught up with the log; %d pods queued, %d nodes", len(self.scheduler.queued),
                 len(self.view.nodes))
        await self.scheduler.run(self._stopping)


async def main(settings: QueueSettings | None = None) -> None:
    settings = settings or load()
    await require_topics(settings.base)
    app = QueueApp(settings)
    loop = asyncio.get_running_loop()
    import signal

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, app.request_stop)
    settle_heap()  # the collector's thresholds for an allocation-heavy loop
    await app.run()
