"""A background reader of whole topics without a consumer group, started over on any failure.

The services' log followers (`follower.LogFollower`) and the binder's deletions reader read topics
with a `Tail` of their own for as long as the service runs. A broker restart or a lost connection
must not end that: each makes a fresh consumer and reads again from where it chooses (the follower
from its fold's positions, the deletions reader from the beginning).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod

from aiokafka import AIOKafkaConsumer

from shared.adapters.kafka import make_consumer
from shared.settings import Settings

log = logging.getLogger(__name__)

RETRY_S = 1.0


class TailTask(ABC):
    """Runs `follow` on a fresh consumer until stopped, starting over after a failure."""

    def __init__(self, settings: Settings, client_suffix: str, what: str) -> None:
        self.settings = settings
        self._client_id = f"{settings.service_name}-{client_suffix}"
        self._what = what
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    @abstractmethod
    async def follow(self, consumer: AIOKafkaConsumer) -> None:
        """Read with `consumer` (started) until cancelled; raise to be started over."""

    async def _run(self) -> None:
        while True:
            consumer = make_consumer(self.settings, group_id=None, client_id=self._client_id)
            try:
                await consumer.start()
                await self.follow(consumer)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("%s: %s failed (%s); starting over", self.settings.service_name, self._what, exc)
                await asyncio.sleep(RETRY_S)
            finally:
                with contextlib.suppress(Exception):
                    await consumer.stop()
