"""`berth delete pod|node NAME`: delete an object through the gateway."""

from __future__ import annotations

import argparse
from typing import Any
from urllib.parse import quote

from .client import Gateway, add_cluster_args, find_cluster, run_guarded


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("delete", help="delete a pod or a node")
    p.add_argument("kind", choices=("pod", "pods", "node", "nodes"))
    p.add_argument("names", nargs="+", metavar="NAME")
    p.add_argument("-n", "--namespace", default="default")
    add_cluster_args(p)
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    gateway = Gateway(find_cluster(args))
    pods = args.kind.startswith("pod")
    for name in args.names:
        path = (f"/api/v1/namespaces/{quote(args.namespace)}/pods/{quote(name)}" if pods
                else f"/api/v1/nodes/{quote(name)}")
        gateway.delete(path)
        print(f"{'pod' if pods else 'node'} \"{name}\" deleted")
    return 0
