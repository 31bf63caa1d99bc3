"""Running the scheduling services as real processes against the test's broker and database, and
watching the event log until a run has settled (shared by the disturbance and replay tests)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from berth.bench.ledger import Ledger, read_envelopes, read_ledger
from berth.fleet import Fleet, service_env
from berth.services import UpOptions
from services.projector.settings import ProjectorSettings
from shared.adapters.postgres import PostgresEventStore, PostgresProjectionStore
from shared.model.loader import ClusterInput

from .fixtures import BerthTestEnv

LOG_TAIL_LINES = 25


def fleet_for(env: BerthTestEnv, logs: Path, filter_workers: int, queues: int = 1) -> Fleet:
    s = env.settings
    base = service_env(s.kafka_bootstrap_servers or "", env.database_url, s.topic_prefix, "chaos-token")
    base.update({
        "BERTH_KAFKA_SESSION_TIMEOUT_MS": str(s.kafka_session_timeout_ms),
        "BERTH_KAFKA_HEARTBEAT_MS": str(s.kafka_heartbeat_ms),
        "BERTH_KAFKA_LINGER_MS": "0",
        "BERTH_UNSCHEDULABLE_TIMEOUT_S": "5",
        "BERTH_LOG_LEVEL": "INFO",
    })
    return Fleet(base, logs, UpOptions(filter_workers=filter_workers, queues=queues))


def waves_of(cluster: ClusterInput, n: int) -> list[ClusterInput]:
    """The nodes, the pods already running and the first share of the others, then the rest of the
    pods to schedule in `n - 1` more waves."""
    running = [p for p in cluster.pods if p.spec.node_name]
    queued = [p for p in cluster.pods if not p.spec.node_name]
    size = -(-len(queued) // n)
    parts = [queued[i:i + size] for i in range(0, len(queued), size)]
    return [ClusterInput(nodes=cluster.nodes, pods=running + parts[0]),
            *(ClusterInput(pods=part) for part in parts[1:])]


async def settle(env: BerthTestEnv, timeout: float, quiet_s: float = 3.0) -> Ledger:
    """Poll the log until it is settled and nothing new has been bound or evicted for `quiet_s`."""
    deadline = time.monotonic() + timeout
    last: tuple[int, int] | None = None
    quiet_since = time.monotonic()
    while True:
        ledger = await read_ledger(env.settings, env.registry)
        mark = (len(ledger.bound), len(ledger.gone))
        if mark != last:
            last, quiet_since = mark, time.monotonic()
        if ledger.settled() and time.monotonic() - quiet_since >= quiet_s:
            return ledger
        assert time.monotonic() < deadline, (
            f"not settled: {len(ledger.bound)} bound, {len(ledger.gone)} gone, "
            f"{sum(m is None for m in ledger.pending.values())} pending without a decision, "
            f"{len(ledger.requested.keys() - ledger.answered)} binds unanswered; for example "
            f"{[(uid, ledger.history[uid]) for uid, m in ledger.pending.items() if m is None][:3]} "
            f"{ledger.problems()[:3]}")
        await asyncio.sleep(1.0)


async def progress(env: BerthTestEnv, at_least: int, timeout: float = 60.0) -> None:
    """Wait until the scheduler has bound `at_least` pods: the disturbance that follows lands mid-run."""
    deadline = time.monotonic() + timeout
    while len((await read_ledger(env.settings, env.registry)).scheduled) < at_least:
        assert time.monotonic() < deadline, f"fewer than {at_least} pods bound"
        await asyncio.sleep(0.3)


async def admitted(env: BerthTestEnv, wave: ClusterInput, timeout: float = 60.0) -> None:
    """Wait until the nodes admitted every pod of `wave` created on them (spec.nodeName)."""
    uids = {p.metadata.uid for p in wave.pods if p.spec.node_name}
    deadline = time.monotonic() + timeout
    while not uids <= (await read_ledger(env.settings, env.registry)).admitted:
        assert time.monotonic() < deadline, "pods created on their nodes were not admitted"
        await asyncio.sleep(0.3)


async def attempted(env: BerthTestEnv, wave: ClusterInput, fraction: float, timeout: float = 90.0) -> None:
    """Wait until `fraction` of the pods of `wave` were attempted (or are gone): a disturbance then
    lands while the rest of the wave flows."""
    uids = {p.metadata.uid for p in wave.pods if not p.spec.node_name}
    deadline = time.monotonic() + timeout
    while True:
        ledger = await read_ledger(env.settings, env.registry)
        left = uids - ledger.messages.keys() - ledger.gone
        if len(left) <= len(uids) * (1 - fraction):
            return
        assert time.monotonic() < deadline, f"{len(left)} pods never attempted, e.g. {sorted(left)[:3]}"
        await asyncio.sleep(0.3)


@asynccontextmanager
async def run_fleet(fleet: Fleet) -> AsyncIterator[Fleet]:
    """The fleet's processes, started and stopped off the event loop (both block)."""
    try:
        await asyncio.to_thread(fleet.start_all)
        yield fleet
    except BaseException:
        # pytest shows a failed test's stderr: each service's last words say where a run stalled.
        for member in fleet.members.values():
            print(f"--- {member.label} (running: {member.process.running()}):\n"
                  f"{member.process.log_tail(LOG_TAIL_LINES)}", file=sys.stderr)
        raise
    finally:
        await asyncio.to_thread(fleet.stop_all)


async def projection_caught_up(env: BerthTestEnv, engine: AsyncEngine, timeout: float):
    """The projection once the event store holds every distinct event of the projected topics."""
    topics = ProjectorSettings(base=env.settings).topics
    wanted = {e.event_id: e for e in await read_envelopes(env.settings, env.registry, topics)}
    store = PostgresEventStore(engine)
    deadline = time.monotonic() + timeout
    while True:
        stored = {e.envelope.event_id for e in await store.all()}
        missing = wanted.keys() - stored
        if not missing:
            break
        assert time.monotonic() < deadline, (
            f"the projector did not catch up: {len(missing)} events missing, "
            f"{sorted({wanted[i].type for i in missing})}, {len(stored - wanted.keys())} unexpected")
        await asyncio.sleep(0.5)
    return await PostgresProjectionStore(engine).load()
