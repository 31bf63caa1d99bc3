"""`berth simulate`: schedule the pending pods of a set of Kubernetes objects in-process."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

import msgspec

from shared.errors import InvalidInput
from shared.memory import settle_heap

from .client import add_validate_arg, field_validation

if TYPE_CHECKING:  # the core, imported when a simulation runs, not for every `berth` command
    from shared.scheduler.outcome import SimulationReport

EXIT_INVALID_INPUT = 2


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "simulate", help="schedule pending pods in-process and print the outcome",
        description="Read Nodes, Pods, PriorityClasses, PodDisruptionBudgets (and optionally a "
                    "KubeSchedulerConfiguration) and schedule the pending pods as kube-scheduler would.")
    p.add_argument("-f", "--filename", dest="files", action="append", required=True, metavar="FILE",
                   help="YAML (multi-document) or JSON input; repeatable; '-' reads standard input")
    p.add_argument("--config", metavar="KSC.yaml", help="a KubeSchedulerConfiguration file")
    add_validate_arg(p)
    p.add_argument("-o", "--output", choices=("json", "table"), default="table",
                   help="table for people (default) or json")
    p.add_argument("--seed", type=int, default=0, help="seed for tie-breaks among equal scores (default 0)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress on stderr (default: when stderr is a terminal)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from shared.adapters.extender_http import build_extenders
    from shared.adapters.input_files import load_files
    from shared.simulation.simulator import Simulator

    files = list(args.files) + ([args.config] if args.config else [])
    show = sys.stderr.isatty() if args.progress is None else args.progress
    started = time.monotonic()

    def progress(cycles: int, pending: int) -> None:
        rate = cycles / max(time.monotonic() - started, 1e-9)
        sys.stderr.write(f"\rscheduling: {cycles} attempts, {pending} pending, {rate:,.0f} attempts/s ")
        sys.stderr.flush()

    try:
        # Upstream's scheduler tests name nodes "nodeA": simulate warns about names a cluster refuses.
        cluster = load_files(files, field_validation=field_validation(args), names="Warn")
        for warning in cluster.warnings:
            print(f"Warning: {warning}", file=sys.stderr)
        settle_heap()
        report = Simulator(cluster, seed=args.seed, on_progress=progress if show else None,
                           make_extenders=build_extenders).run()
        if show:
            sys.stderr.write(f"\rscheduled in {time.monotonic() - started:.2f}s" + " " * 40 + "\n")
    except InvalidInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID_INPUT
    if args.output == "json":
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
    else:
        sys.stdout.write(render_table(report))
    return 0


def render_table(report: SimulationReport) -> str:
    rows = [("POD", "PHASE", "NODE", "DETAIL")]
    for p in report.pods:
        if p.phase == "Bound":
            detail = ""
        elif p.phase == "Deleted":
            detail = f"preempted by {p.preemptedBy}"
        else:
            detail = p.message or "not attempted (no profile serves its schedulerName)"
            if p.nominatedNodeName:
                detail = f"nominated to {p.nominatedNodeName}; {detail}"
        rows.append((f"{p.namespace}/{p.name}", p.phase, p.nodeName or "-", detail))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(3)) + "  " + r[3] for r in rows]
    bound = sum(1 for p in report.pods if p.phase == "Bound")
    pending = sum(1 for p in report.pods if p.phase == "Pending")
    deleted = sum(1 for p in report.pods if p.phase == "Deleted")
    lines.append(f"\n{len(report.pods)} pods: {bound} bound, {pending} pending, {deleted} preempted "
                 f"({report.cycles} scheduling cycles, seed {report.seed})")
    return "\n".join(line.rstrip() for line in lines) + "\n"
