"""`berth replay`: re-make every recorded decision from the event log and report divergences.

    berth replay                              # the cluster's event store (Postgres)
    berth replay --source kafka               # the topics themselves
    berth replay --source run.jsonl           # an export (`berth events --export run.jsonl`)
    berth replay --from 2026-11-23T10:00:00Z --to 5000
    berth replay --until 2026-11-23T10:05:00Z # the cluster as it was then
    berth replay --config other.yaml          # what would another configuration have changed?

Exit status: 0 when every decision replays as recorded (what-if changes are expected), 1 when a
decision or preemption diverged, 2 for invalid input.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from shared.errors import InvalidInput
from shared.memory import settle_heap

from .client import EXIT_INVALID_INPUT, CliError, add_cluster_args, find_cluster, run_guarded
from .get_cmd import table

if TYPE_CHECKING:  # the core, imported when a log is replayed, not for every `berth` command
    from shared.replay.at_time import ClusterAt
    from shared.replay.engine import ReplayReport, Window
    from shared.replay.history import History


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("replay", help="re-make the recorded decisions and report divergences")
    add_source_args(p)
    p.add_argument("--from", dest="start", metavar="WHEN", help="first cycle to check: a time (ISO 8601) or a "
                   "position in the log (event number)")
    p.add_argument("--to", dest="end", metavar="WHEN", help="last cycle to check (time or position)")
    p.add_argument("--until", metavar="TIME", help="print the cluster as it was at TIME instead (nodes, pods, queue)")
    p.add_argument("--config", metavar="FILE", help="also decide every cycle under this KubeSchedulerConfiguration "
                   "and report what would have changed")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table",
                   help="table for people (default) or json")
    p.set_defaults(run=run_guarded(run))


def add_source_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", default="store", metavar="SOURCE",
                   help="store (the Postgres event store, default), kafka, or an exported JSON Lines FILE")
    add_cluster_args(p)


def load_history(args: argparse.Namespace) -> History:
    """The history the arguments name; the heap is settled after it (a large, long-lived state)."""
    history = _read_history(args)
    settle_heap()
    return history


def _read_history(args: argparse.Namespace) -> History:
    from shared.adapters.history import history_from_export, history_from_kafka, history_from_store

    source = args.source
    if source not in ("store", "kafka"):
        if not Path(source).is_file():
            raise CliError(f"--source: {source} is not a file (nor 'store' or 'kafka')", EXIT_INVALID_INPUT)
        return history_from_export(source)
    info = find_cluster(args)
    if source == "kafka":
        if not info.kafka_bootstrap_servers:
            raise CliError("the broker address is unknown: set KAFKA_BOOTSTRAP_SERVERS")
        from shared.settings import load_settings

        settings = load_settings({}, kafka_bootstrap_servers=info.kafka_bootstrap_servers,
                                 topic_prefix=info.topic_prefix, service_name="berth-replay")
        return asyncio.run(history_from_kafka(settings))
    if not info.database_url:
        raise CliError("the database address is unknown: set DATABASE_URL")
    from shared.adapters.postgres.engine import engine_scope

    async def read() -> History:
        async with engine_scope(info.database_url or "") as engine:
            return await history_from_store(engine)

    return asyncio.run(read())


def parse_when(text: str, flag: str) -> int | datetime:
    text = text.strip()
    if text.isdigit():
        return int(text)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise CliError(f"{flag}: {text!r} is neither a time (ISO 8601) nor a log position",
                       EXIT_INVALID_INPUT) from None
    if when.tzinfo is None:
        raise CliError(f"{flag}: {text!r} has no time zone (add Z or +00:00)", EXIT_INVALID_INPUT)
    return when


def window(history: History, start: str | None, end: str | None) -> Window:
    def seq(text: str | None, flag: str, first: bool) -> int | None:
        if text is None:
            return None
        when = parse_when(text, flag)
        if isinstance(when, int):
            return when
        inside = [i for i, e in enumerate(history.events) if (e.envelope.timestamp >= when if first
                                                               else e.envelope.timestamp <= when)]
        if not inside:
            return len(history) if first else -1
        return inside[0] if first else inside[-1]

    from shared.replay.engine import Window

    return Window(seq(start, "--from", True), seq(end, "--to", False))


def run(args: argparse.Namespace) -> int:
    from shared.adapters.input_files import load_files
    from shared.replay.at_time import cluster_at
    from shared.replay.engine import Replayer

    from .bench.inprocess import Progress

    what_if = None
    if args.config:
        try:
            what_if = load_files([args.config]).config
        except (OSError, InvalidInput) as exc:
            raise CliError(f"--config: {exc}", EXIT_INVALID_INPUT) from None
    history = load_history(args)
    if args.until:
        when = parse_when(args.until, "--until")
        if isinstance(when, int):
            when = history.events[min(when, len(history) - 1)].envelope.timestamp if len(history) else datetime.now()
        state = cluster_at(history, when)
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(state)).decode() + "\n" if args.output == "json"
                         else render_cluster(state))
        return 0
    bar = Progress(max(1, len(history.batches) + len(history.preemptions)), sys.stderr.isatty(), unit="cycles")
    started = time.monotonic()
    report = Replayer(history, what_if=what_if, what_if_name=args.config or "",
                      window=window(history, args.start, args.end), progress=lambda d, t: bar.update(d, every=20)).run()
    bar.close()
    print(f"replayed in {time.monotonic() - started:.1f} s", file=sys.stderr)
    if args.output == "json":
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(report)).decode() + "\n")
    else:
        sys.stdout.write(render_report(report))
    diverged = any(d.kind != "what-if" for d in report.divergences)
    return 1 if diverged else 0


def render_report(r: ReplayReport) -> str:
    lines = [
        f"{r.events} events, {r.cycles} cycles",
        f"decisions:   {r.decisions} replayed, {r.matched} as recorded, {r.decisions - r.matched} diverged",
        f"preemptions: {r.preemptions} replayed, {r.preemptions_matched} as recorded, "
        f"{r.preemptions - r.preemptions_matched} diverged",
    ]
    if r.what_if:
        lines.append(f"what-if ({r.what_if}): {r.changed} decisions would change")
    if r.not_replayable:
        lines.append(f"{r.not_replayable} decisions were made with no nodes (nothing to rebuild)")
    if r.awaiting_preemption:
        lines.append(f"{r.awaiting_preemption} decisions were still waiting on preemption when the log ended")
    if r.unfinished_cycles:
        lines.append(f"{r.unfinished_cycles} cycles were never decided (the queue stopped mid-cycle)")
    if r.unknown_configs:
        lines.append(f"configurations not in the log (replayed under the defaults): {', '.join(r.unknown_configs)}")
    if r.divergences:
        rows = [("KIND", "POD", "ATTEMPT", "CYCLE", "RECORDED", "REPLAYED", "PLUGIN", "DETAIL")]
        rows += [(d.kind, d.pod, str(d.attempt), str(d.cycle), d.recorded, d.replayed, d.plugin or "-", d.detail)
                 for d in r.divergences]
        lines += ["", table(rows).rstrip("\n")]
    return "\n".join(lines) + "\n"


def render_cluster(state: ClusterAt) -> str:
    out = [f"the cluster at {state.at.isoformat()} ({state.events} events)", "", "NODES"]
    rows: list[tuple[str, ...]] = [("NAME", "PODS", "CPU (m)", "MEMORY")]
    rows += [(n.name, str(n.pods), f"{n.cpu_requested_milli}/{n.cpu_allocatable_milli}",
              f"{n.memory_requested}/{n.memory_allocatable}") for n in state.nodes]
    out += [table(rows).rstrip("\n"), "", "PODS"]
    rows = [("POD", "PHASE", "NODE", "NOMINATED")]
    rows += [(p.pod, p.phase, p.node or "<none>", p.nominated_node or "<none>") for p in state.pods]
    out += [table(rows).rstrip("\n"), "", "QUEUE"]
    rows = [("POD", "ATTEMPTS", "LAST REASON")]
    rows += [(p.pod, str(p.attempts), p.message or "-") for p in state.queue]
    out.append(table(rows).rstrip("\n"))
    return "\n".join(out) + "\n"
