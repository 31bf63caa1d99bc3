"""The projector, SIGKILLed right after its first database commit and before its Kafka offset commit.

    python -m tests.integration.crashing_projector      (environment as for python -m services.projector)

Used by test_projector_crash.py: a real process dying at the worst moment, not a simulated one.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Sequence

from services.projector.app import main
from shared.adapters.postgres import projection_store
from shared.events import ReceivedEvent
from shared.ports import ApplyResult

_apply = projection_store.PostgresProjectionStore.apply


async def _apply_then_die(self: projection_store.PostgresProjectionStore, group: str,
                          batch: Sequence[ReceivedEvent]) -> ApplyResult:
    result = await _apply(self, group, batch)  # committed: rows, events and positions are durable
    print(f"applied {result.applied}", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # before the runtime commits the offsets to Kafka
    return result


if __name__ == "__main__":
    projection_store.PostgresProjectionStore.apply = _apply_then_die  # type: ignore[method-assign]  # the crash under test
    asyncio.run(main())
