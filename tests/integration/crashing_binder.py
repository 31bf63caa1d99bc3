"""The binder, SIGKILLed right after its second batch of outcomes reached the broker and before the
runtime commits that batch's offsets.

    python -m tests.integration.crashing_binder      (environment as for python -m services.binder)

Used by test_binder_crash.py: a real process dying mid-burst, not a simulated one.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Sequence

from services.binder.app import main
from shared.adapters.kafka import KafkaPublisher
from shared.events import OutgoingEvent

_publish = KafkaPublisher.publish
_batches = [0]


async def _publish_then_die(self: KafkaPublisher, events: Sequence[OutgoingEvent]) -> None:
    await _publish(self, events)  # acknowledged by the broker
    if events:
        _batches[0] += 1
        print(f"published {len(events)}", flush=True)
        if _batches[0] == 2:
            os.kill(os.getpid(), signal.SIGKILL)  # before the runtime commits the offsets


if __name__ == "__main__":
    KafkaPublisher.publish = _publish_then_die  # type: ignore[method-assign]  # the crash under test
    asyncio.run(main())
