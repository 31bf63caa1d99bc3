"""`berth chaos`: schedule a workload at scale while SIGKILLing services, the broker and the
database at seeded moments; print the fault matrix and check the invariants afterwards.

    berth chaos                                   # SchedulingBasic, 5,000 nodes, 10,000 pods, each process killed once
    berth chaos --faults 16 --seed 7 --report docs/reliability-run.md
    berth chaos --targets queue,tansu --nodes 500 --pods 2000

Exit status: 0 when every check holds, 1 when one does not, 2 for invalid arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .bench_cmd import add_workload_args
from .chaos.matrix import markdown_table, text_table
from .chaos.plan import TARGETS, members_of
from .client import EXIT_ERROR, CliError, run_guarded
from .services import UpOptions, check_filter_workers, check_queues, up_options

if TYPE_CHECKING:  # the run brings in the broker, the database and every client: only when it runs
    from .chaos.run import ChaosOptions, ChaosResult


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "chaos", help="kill processes at random while scheduling; check invariants",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    add_workload_args(p, pods_help="pods applied after the workload's initial ones")
    p.add_argument("--rate", type=float, default=100.0, metavar="PODS_PER_S",
                   help="pods applied per second (default 100: pods keep arriving while the faults play out)")
    p.add_argument("--faults", type=int, default=None,
                   help="processes to kill (default: each targeted process once)")
    p.add_argument("--targets", type=_targets, default=TARGETS, metavar="A,B,...",
                   help=f"the kinds of process that may be killed, every queue and filter worker of a kind "
                        f"where several run (default {','.join(TARGETS)})")
    p.add_argument("--seed", type=int, default=0, help="picks the moments and the order of the faults")
    p.add_argument("--filter-workers", type=int, default=1, metavar="K",
                   help="filter replicas (default 1)")
    p.add_argument("--settle-timeout", type=float, default=300.0, metavar="S",
                   help="give up waiting for the cluster to settle after S seconds (default 300)")
    p.add_argument("--state-dir", metavar="DIR",
                   help="keep the cluster's data and logs there (default: a temporary one)")
    p.add_argument("--report", metavar="FILE", help="also write the matrix and the checks to FILE as Markdown")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text",
                   help="text for people (default) or json")
    p.set_defaults(run=run_guarded(run))


def _targets(text: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))  # each kind once
    unknown = [t for t in chosen if t not in TARGETS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"unknown targets {unknown}; known: {', '.join(TARGETS)}")
    return chosen


def run(args: argparse.Namespace) -> int:
    check_filter_workers(args.filter_workers)
    cluster = up_options(args.filter_workers)  # as the run will start it
    check_queues(cluster.queues, cluster.filter_workers)
    if args.pods < 1 or args.nodes < 1 or args.rate <= 0 or (args.faults or 0) < 0:
        raise CliError("--nodes, --pods and --rate must be positive, --faults not negative", 2)
    from .chaos.run import ChaosOptions, run_chaos

    options = ChaosOptions(workload=args.workload, nodes=args.nodes, pods=args.pods, seed=args.seed, faults=args.faults,
                           targets=args.targets, rate=args.rate, filter_workers=args.filter_workers,
                           settle_timeout_s=args.settle_timeout,
                           state_dir=Path(args.state_dir).resolve() if args.state_dir else None)
    if options.state_dir is not None:
        options.state_dir.mkdir(parents=True, exist_ok=True)
    print(f"berth chaos: {_title(options, cluster)}", file=sys.stderr, flush=True)
    result = run_chaos(options, say=lambda line: print(line, file=sys.stderr, flush=True))
    if args.output == "json":
        print(json.dumps({"options": {**asdict(options), "state_dir": str(options.state_dir or "")},
                          "faults": [asdict(f) for f in result.faults], "checks": result.checks,
                          "accepted": result.accepted, "bound": result.bound, "pending": result.pending,
                          "seconds": round(result.seconds, 2), "ok": result.ok}, indent=2))
    else:
        print(_text(result))
    if args.report:
        Path(args.report).write_text(_markdown(result, " ".join(["berth", "chaos", *sys.argv[2:]]), cluster))
    return 0 if result.ok else EXIT_ERROR


def _title(o: ChaosOptions, cluster: UpOptions) -> str:
    if o.faults is None:
        from .fleet import planned_labels
        from .supervised_cluster import BROKER, DATABASE

        targeted = len(members_of(o.targets, [*planned_labels(cluster), BROKER, DATABASE]))
        faults = f"{targeted} faults (one per targeted process)"
    else:
        faults = f"{o.faults} faults"
    return (f"{o.workload}, {o.nodes:,} nodes, {o.pods:,} pods applied at {o.rate:,.0f} pods/s, {faults} "
            f"(seed {o.seed}), {cluster.filter_workers} filter worker(s), {cluster.queues} queue(s)")


def _summary(r: ChaosResult) -> str:
    rate = r.bound / r.seconds if r.seconds else 0.0
    return (f"{r.accepted:,} pods accepted, {r.bound:,} bound, {r.pending:,} pending; settled {r.seconds:.1f} s after "
            f"the first pod ({rate:,.0f} pods/s overall)")


def _text(r: ChaosResult) -> str:
    lines = [text_table(r.faults), ""]
    lines += [f"{'ok  ' if v == 'ok' else 'FAIL'}  {name}{'' if v == 'ok' else ': ' + v}"
              for name, v in r.checks.items()]
    lines += ["", _summary(r)]
    return "\n".join(lines)


def _markdown(r: ChaosResult, command: str, cluster: UpOptions) -> str:
    lines = [f"`{command}`: {_title(r.options, cluster)}.", "", markdown_table(r.faults), ""]
    lines += [f"- {'ok' if v == 'ok' else '**FAIL**'}: {name}{'' if v == 'ok' else ': ' + v}"
              for name, v in r.checks.items()]
    lines += ["", _summary(r) + ".", ""]
    return "\n".join(lines)
