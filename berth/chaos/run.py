"""One chaos run: the cluster `berth up` runs (embedded broker and database, every service, the
supervisor), a workload applied through the gateway at a steady rate, processes SIGKILLed on a
seeded plan while it schedules, then the invariants checked once the cluster has settled:

- every pod the gateway acknowledged is in the log, once (one uid per name), and no other;
- every pod bound at most once, every bind answered, every pod not bound pending with an
  upstream-worded reason, no node over-committed (the log's fold, `berth.bench.ledger`);
- the PostgreSQL read model equals the fold of the event store;
- every event of the broker's kept topics is in the event store.
"""

from __future__ import annotations

import asyncio
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import msgspec

from shared.events import PodSubmitted, TopicRegistry
from shared.settings import Settings, load_settings
from shared.workloads import Workload, generate

from ..bench.ledger import read_envelopes, read_ledger
from ..fleet import Fleet, service_env
from ..services import up_options
from ..state_lock import holding
from ..supervised_cluster import SupervisedCluster
from ..supervisor import Supervisor
from .matrix import FaultRecord, Sample, longest_stall, rate
from .plan import TARGETS, Fault, fault_plan, members_of

RATE_WINDOW_S = 3.0
"""The binding rate before a kill and after binding resumed is measured over this long."""
RECOVERY_WAIT_S = 90.0
"""A fault waits (at most this long) until the cluster binds again after the one before: a fault
that lands on a cluster still recovering measures the two together."""
CHUNK_S = 0.5
"""Pods are applied in one request every this many seconds."""


@dataclass(frozen=True)
class ChaosOptions:
    workload: str = "SchedulingBasic"
    nodes: int = 5000
    pods: int = 10000
    seed: int = 0
    faults: int | None = None
    """Processes to kill; None: each process of the targeted kinds once (every queue and filter
    worker where several run)."""
    targets: tuple[str, ...] = TARGETS
    """Kinds of process (`TARGETS`); a kind with several processes has each of them in the plan."""
    rate: float = 100.0
    """Pods applied per second: 10,000 pods at 100 a second keep pods arriving while a fault per
    process (8 with one worker and one queue) is spread out enough for the cluster to recover
    from each before the next."""
    filter_workers: int = 1
    settle_timeout_s: float = 300.0
    state_dir: Path | None = None


@dataclass
class ChaosResult:
    options: ChaosOptions
    faults: list[FaultRecord] = field(default_factory=list)
    checks: dict[str, str] = field(default_factory=dict)
    """Check → "ok", or what was found wrong."""
    accepted: int = 0
    bound: int = 0
    pending: int = 0
    seconds: float = 0.0
    """From the first pod applied until the cluster settled."""
    supervisor: list[str] = field(default_factory=list)
    """What the supervisor said (restarts)."""

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(v == "ok" for v in self.checks.values())


def run_chaos(options: ChaosOptions, say: Callable[[str], None] = lambda line: None) -> ChaosResult:
    workload = generate(options.workload, options.nodes, options.pods, options.seed)
    with tempfile.TemporaryDirectory(prefix="berth-chaos-") as tmp:
        state = options.state_dir or Path(tmp)
        with holding(state):  # a directory a berth up runs on is refused, not taken over
            return _run_on(state, options, workload, say)


def _run_on(state: Path, options: ChaosOptions, workload: Workload, say: Callable[[str], None]) -> ChaosResult:
    from berth.stack.embedded import EmbeddedStack

    settings = load_settings()
    stack = EmbeddedStack(state, settings=settings)
    fleet: Fleet | None = None
    try:
        endpoints = stack.start()
        settings = settings.with_endpoints(kafka_bootstrap_servers=endpoints.kafka_bootstrap_servers,
                                           database_url=endpoints.database_url)
        token = secrets.token_urlsafe(16)
        env = service_env(endpoints.kafka_bootstrap_servers, endpoints.database_url, settings.topic_prefix, token)
        env.setdefault("BERTH_LOG_LEVEL", "WARNING")
        fleet = Fleet(env, state / "logs", up_options(options.filter_workers))
        fleet.start_all()
        gateway = next(m for m in fleet.members.values() if m.spec.gateway)
        result = ChaosResult(options)

        def heard(line: str) -> None:
            result.supervisor.append(line)
            say(line)

        cluster = SupervisedCluster(stack, fleet, say=heard)
        driver = _Driver(options, settings, cluster, Supervisor(cluster, say=heard), gateway.url, token, say)
        asyncio.run(driver.run(workload.cluster.nodes, workload.cluster.pods, result))
        return result
    finally:
        if fleet is not None:
            fleet.stop_all()
        stack.stop()


def _docs(objects: Sequence[Any]) -> bytes:
    items = [{"apiVersion": "v1", "kind": obj.kind, **msgspec.to_builtins(obj)} for obj in objects]
    return msgspec.json.encode({"apiVersion": "v1", "kind": "List", "items": items})


class _Driver:
    def __init__(self, options: ChaosOptions, settings: Settings, cluster: SupervisedCluster, supervisor: Supervisor,
                 gateway_url: str, token: str, say: Callable[[str], None]) -> None:
        self.options, self.settings, self.cluster, self.supervisor = options, settings, cluster, supervisor
        self.url, self.token, self.say = gateway_url, token, say
        self.samples: list[Sample] = []
        self.t0 = 0.0
        self.stopped = ""
        """Why the supervisor gave up ("" while it has not)."""

    def now(self) -> float:
        return time.monotonic() - self.t0

    async def run(self, nodes: Sequence[Any], pods: Sequence[Any], result: ChaosResult) -> None:
        done = threading.Event()
        watcher = threading.Thread(target=self._supervise, args=(done,), name="chaos-supervisor", daemon=True)
        watcher.start()
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
                await self._apply(http, nodes)
                self.t0 = time.monotonic()
                sampler = asyncio.create_task(self._sample())
                victims = members_of(self.options.targets, list(self.cluster.members))
                count = len(victims) if self.options.faults is None else self.options.faults
                plan = fault_plan(self.options.seed, victims, count, len(pods) / self.options.rate)
                injector = asyncio.create_task(self._inject(plan))
                accepted = await self._submit(http, pods)
                killed = await injector
                result.accepted = len(accepted)
                self.say(f"chaos: {len(accepted)} pods accepted; waiting for the cluster to settle")
                result.bound, result.pending = await self._settle(len(accepted))
                result.seconds = self.now()
                sampler.cancel()
        finally:
            done.set()
            watcher.join(60)
        result.faults = self._records(killed)
        result.checks = await self._check(accepted)
        if self.stopped:
            result.checks["supervisor"] = self.stopped

    def _supervise(self, done: threading.Event) -> None:
        while not done.is_set() and not self.stopped:
            self.stopped = self.supervisor.poll() or ""
            time.sleep(0.2)

    async def _apply(self, http: aiohttp.ClientSession, objects: Sequence[Any]) -> None:
        """Apply until the gateway acknowledges (it may be down or restarting meanwhile)."""
        body = _docs(objects)
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        deadline = time.monotonic() + 180
        while True:
            try:
                async with http.post(self.url + "/apis/berth.dev/v1/apply", data=body, headers=headers) as resp:
                    if resp.status == 200:
                        return
                    text = await resp.text()
                    if resp.status < 500:
                        raise RuntimeError(f"the gateway refused the workload ({resp.status}): {text[:300]}")
            except (aiohttp.ClientError, asyncio.TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the gateway did not acknowledge an apply for 180 s")
            await asyncio.sleep(0.3)

    async def _submit(self, http: aiohttp.ClientSession, pods: Sequence[Any]) -> set[str]:
        step = max(1, int(self.options.rate * CHUNK_S))
        accepted: set[str] = set()
        for i in range(0, len(pods), step):
            await asyncio.sleep(max(0.0, i / self.options.rate - self.now()))
            chunk = pods[i:i + step]
            await self._apply(http, chunk)
            accepted |= {f"{p.metadata.namespace or 'default'}/{p.metadata.name}" for p in chunk}
        return accepted

    async def _inject(self, plan: Sequence[Fault]) -> list[tuple[Fault, float, float | None]]:
        """Each fault: (fault, when killed, when running again or None)."""
        out: list[tuple[Fault, float, float | None]] = []
        for fault in plan:
            await asyncio.sleep(max(0.0, fault.at_s - self.now()))
            if out and out[-1][2] is not None:
                last_back = out[-1][2]
                await self._until(lambda: self._recovered(last_back), RECOVERY_WAIT_S)
            member = self.cluster.members.get(fault.target)
            if member is None:
                continue
            before = self.supervisor.restarts().get(fault.target, 0)
            killed = self.now()
            member.process.kill()
            self.say(f"chaos: {killed:.1f} s: killed {fault.target}")

            def back() -> bool:
                current = self.cluster.members.get(fault.target)
                return (self.supervisor.restarts().get(fault.target, 0) > before and current is not None
                        and current.process.running())

            came_back = await self._until(back, 120)
            out.append((fault, killed, self.now() if came_back else None))
        return out

    def _recovered(self, back: float) -> bool:
        """Every process runs, and the cluster bound a pod after the last one killed ran again
        (counted from a second later: the read model still shows binds decided before the kill
        for a moment), or no pod waits."""
        if not all(m.process.running() for m in self.cluster.members.values()) or not self.samples:
            return False
        settled = back + 1.0
        if self.samples[-1][0] < settled:
            return False
        reference = next((b for t, b, _ in reversed(self.samples) if t <= settled), 0)
        _, bound, known = self.samples[-1]
        return bound > reference or bound >= known

    async def _until(self, condition: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline or self.stopped:
                return False
            await asyncio.sleep(0.05)
        return True

    def _records(self, killed: Sequence[tuple[Fault, float, float | None]]) -> list[FaultRecord]:
        end = self.samples[-1][0] if self.samples else 0.0
        out = []
        for i, (fault, at, back) in enumerate(killed):
            until = killed[i + 1][1] if i + 1 < len(killed) else end
            longest, resumed = longest_stall(self.samples, at, until)
            stall: float | None = longest
            after = None
            if resumed is not None and resumed + RATE_WINDOW_S <= end:
                after = rate(self.samples, resumed, resumed + RATE_WINDOW_S)
            elif resumed is None:
                stall = None
            out.append(FaultRecord(fault.target, at, None if back is None else back - at, stall,
                                   rate(self.samples, max(0.0, at - RATE_WINDOW_S), at), after))
        return out

    async def _query(self, sql: str) -> list[asyncpg.Record] | None:
        assert self.settings.database_url
        try:
            conn = await asyncpg.connect(self.settings.database_url, timeout=2)
        except (OSError, asyncpg.PostgresError, asyncio.TimeoutError):
            return None
        try:
            return await conn.fetch(sql)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            return None
        finally:
            await conn.close()

    async def _sample(self) -> None:
        while True:
            rows = await self._query("SELECT count(*) FILTER (WHERE phase = 'Bound'), count(*) FROM pods "
                                     "WHERE NOT deleted AND name <> ''")
            if rows is not None:
                self.samples.append((self.now(), int(rows[0][0]), int(rows[0][1])))
            await asyncio.sleep(0.25)

    async def _settle(self, accepted: int) -> tuple[int, int]:
        """Until every accepted pod is bound, or pending with a reason, unchanged for 3 s."""
        deadline = time.monotonic() + self.options.settle_timeout_s
        last: tuple[int, int] | None = None
        since = time.monotonic()
        while time.monotonic() < deadline and not self.stopped:
            rows = await self._query("SELECT count(*) FILTER (WHERE phase = 'Bound'), "
                                     "count(*) FILTER (WHERE phase <> 'Bound' AND message IS NOT NULL), count(*) "
                                     "FROM pods WHERE NOT deleted")
            if rows is not None:
                bound, pending, total = (int(v) for v in rows[0])
                if (bound, pending) != last:
                    last, since = (bound, pending), time.monotonic()
                elif total >= accepted and bound + pending == total and time.monotonic() - since >= 3:
                    return bound, pending
            await asyncio.sleep(0.5)
        return last or (0, 0)

    async def _check(self, accepted: set[str]) -> dict[str, str]:
        from shared.adapters.postgres import PostgresEventStore, PostgresProjectionStore, engine_scope
        from shared.projection import fold

        registry = TopicRegistry(self.settings.topic_prefix)
        checks: dict[str, str] = {}
        # The kept topics are read once: for the submissions here, for the store's check below.
        logged = await read_envelopes(self.settings, registry, tuple(spec.name for spec in registry if spec.kept))
        uids: dict[str, set[str]] = {}
        for env in logged:
            if isinstance(env.payload, PodSubmitted):
                meta = env.payload.pod.metadata
                uids.setdefault(f"{meta.namespace or 'default'}/{meta.name}", set()).add(meta.uid or "")
        twice = sorted(name for name, found in uids.items() if len(found) > 1)
        missing = sorted(accepted - uids.keys())
        extra = sorted(uids.keys() - accepted)
        checks["every accepted pod in the log, once"] = "ok" if not (twice or missing or extra) else (
            f"{len(missing)} missing {missing[:3]}, {len(twice)} submitted twice {twice[:3]}, {len(extra)} unknown")
        ledger = await read_ledger(self.settings, registry)
        problems = ledger.problems()
        checks["bound once, binds answered, reasons upstream's, no over-commit"] = (
            "ok" if not problems else f"{len(problems)} problems: {problems[:3]}")
        assert self.settings.database_url
        async with engine_scope(self.settings.database_url, pool_size=2) as engine:
            stored = [e async for _, e in PostgresEventStore(engine, page_size=5000).read()]
            model = await PostgresProjectionStore(engine).load()
        checks["read model = fold of the event store"] = (
            "ok" if model == fold(e.envelope for e in stored) else "the read model differs from the fold")
        in_store = {e.envelope.event_id for e in stored}
        lost = [env for env in logged if env.event_id not in in_store]
        checks["every event of the log in the event store"] = (
            "ok" if not lost else f"{len(lost)} not stored, e.g. {lost[0].type} {lost[0].event_id}")
        return checks
