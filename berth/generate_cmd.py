"""`berth generate`: write a scheduler_perf-style cluster as Kubernetes objects (a JSON List)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from shared.model import Node, Pod
from shared.workloads import WORKLOADS, generate


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "generate", help="write a synthetic cluster (nodes + pods) for simulate, apply or bench",
        description="Deterministic clusters modelled on kube-scheduler's scheduler_perf workloads.")
    p.add_argument("workload", choices=sorted(WORKLOADS),
                   help="which scheduler_perf workload to model")
    p.add_argument("--nodes", type=int, default=100,
                   help="nodes in the cluster (default 100)")
    p.add_argument("--pods", type=int, default=1000, help="measured (pending) pods")
    p.add_argument("--seed", type=int, default=0,
                   help="the same seed writes the same cluster (default 0)")
    p.add_argument("-o", "--output", default="-", metavar="FILE", help="where to write (default stdout)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    w = generate(args.workload, args.nodes, args.pods, args.seed)
    # The model leaves out fields at their defaults, apiVersion and kind included: state them.
    objects: tuple[Node | Pod, ...] = (*w.cluster.nodes, *w.cluster.pods, *w.churn)  # churn last: a file has no timing
    items = [{"apiVersion": "v1", "kind": obj.kind, **msgspec.to_builtins(obj)} for obj in objects]
    data = msgspec.json.encode({"apiVersion": "v1", "kind": "List", "items": items})
    if args.output == "-":
        sys.stdout.buffer.write(data + b"\n")
    else:
        with open(args.output, "wb") as f:
            f.write(data + b"\n")
        print(f"wrote {len(w.cluster.nodes)} nodes and {len(w.cluster.pods) + len(w.churn)} pods "
              f"({w.measured + len(w.churn)} pending) to {args.output}", file=sys.stderr)
    return 0
