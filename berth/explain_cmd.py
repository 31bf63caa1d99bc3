"""`berth explain pod NAME [--attempt K] [--now]`: per node, each filter plugin's verdict and each
score plugin's raw and normalised score, and the pick, as the scheduler saw them (rebuilt from the
event log by replay); `--now` asks the same of a fresh attempt against the current state."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

import msgspec

from shared.errors import NotFound

from .client import CliError, run_guarded
from .get_cmd import table
from .replay_cmd import add_source_args, load_history

if TYPE_CHECKING:  # the core, imported when a pod is explained
    from shared.replay.explain import Explanation


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("explain", help="why a pod went where it went (or nowhere)")
    p.add_argument("kind", choices=("pod", "pods", "po"),
                   help="pod (the only kind explained)")
    p.add_argument("name", help="NAME or NAMESPACE/NAME")
    p.add_argument("-n", "--namespace", default="default",
                   help="the pod's namespace (default: default)")
    p.add_argument("--attempt", type=int, metavar="K", help="the K-th attempt (default: the last recorded)")
    p.add_argument("--now", action="store_true", help="a fresh attempt against the current state")
    p.add_argument("--all-nodes", action="store_true", help="list nodes the walk did not reach too")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table",
                   help="table for people (default) or json")
    add_source_args(p)
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    name = args.name if "/" in args.name else f"{args.namespace}/{args.name}"
    from shared.replay.explain import explain_attempt, explain_now

    history = load_history(args)
    try:
        explained = explain_now(history, name) if args.now else explain_attempt(history, name, args.attempt)
    except NotFound as exc:
        raise CliError(str(exc)) from None
    if args.output == "json":
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(explained)).decode() + "\n")
    else:
        sys.stdout.write(render(explained, all_nodes=args.all_nodes))
    return 0


def render(x: Explanation, *, all_nodes: bool = False) -> str:
    head = [
        f"Pod:        {x.pod}",
        f"Attempt:    {x.attempt}" + (f" (cycle {x.cycle}, {x.at.isoformat()})" if x.at else " (now)"),
        f"Seed:       {x.seed}" + (f"   config {x.config_hash}" if x.config_hash else ""),
        f"Walk:       from node #{x.start} of {x.nodes_total}; {len(x.feasible)} feasible found",
    ]
    if x.recorded:
        head.append(f"Recorded:   {x.recorded}")
    head.append(f"{'Replayed' if x.recorded else 'Outcome'}:   {x.replayed}")
    if x.pick:
        head.append(f"Pick:       {x.pick}")
    plugins: list[str] = []
    for n in x.nodes:
        plugins += [p for p in n.raw if p not in plugins]
    rows = [("NODE", "WALKED", "FILTER", *(f"{p} raw/norm" for p in plugins), "TOTAL", "")]
    for n in x.nodes:
        if not (all_nodes or n.walked):
            continue
        failed = [f"{v.plugin}" for v in n.filters if v.verdict == "fail"]
        status = n.status if n.status == "fits" or len(failed) < 2 else f"{n.status} (also {', '.join(failed[1:])})"
        scores = [f"{n.raw[p]}/{n.normalized[p]}" if p in n.raw and p in n.normalized else
                  (str(n.raw[p]) if p in n.raw else "-") for p in plugins]
        rows.append((n.node, "yes" if n.walked else "no", status, *scores,
                     "-" if n.total is None else str(n.total), "<- picked" if n.picked else ""))
    return "\n".join(head) + "\n\n" + table(rows)
