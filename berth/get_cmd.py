"""`berth get nodes|pods [-o table|json|yaml]`: list what the read model holds."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any
from urllib.parse import quote

import yaml

from .client import Gateway, add_cluster_args, find_cluster, run_guarded


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("get", help="list nodes or pods")
    p.add_argument("kind", choices=("nodes", "node", "no", "pods", "pod", "po"))
    p.add_argument("name", nargs="?", help="one object by name")
    p.add_argument("-n", "--namespace", help="pods of one namespace (default: all namespaces)")
    p.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")
    add_cluster_args(p)
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    gateway = Gateway(find_cluster(args))
    pods = args.kind.startswith("po")
    if pods:
        if args.name:
            path = f"/api/v1/namespaces/{quote(args.namespace or 'default')}/pods/{quote(args.name)}"
        else:
            path = f"/api/v1/namespaces/{quote(args.namespace)}/pods" if args.namespace else "/api/v1/pods"
    else:
        path = f"/api/v1/nodes/{quote(args.name)}" if args.name else "/api/v1/nodes"
    data = gateway.get(path)
    if args.output == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif args.output == "yaml":
        sys.stdout.write(yaml.safe_dump(data, sort_keys=False))
    else:
        items = data["items"] if "items" in data else [data]
        sys.stdout.write(table(pod_rows(items) if pods else node_rows(items)))
    return 0


def table(rows: list[tuple[str, ...]], padding: int = 3) -> str:
    """Left-aligned columns as kubectl's tab writer lays them out (3 spaces for get, 2 for describe)."""
    if len(rows) == 1:
        return "No resources found.\n"
    gap = " " * padding
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = [gap.join(r[i].ljust(w) for i, w in enumerate(widths)) + gap + r[-1] for r in rows]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def pod_rows(items: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [("NAMESPACE", "NAME", "STATUS", "NODE", "NOMINATED NODE", "PRIORITY", "MESSAGE")]
    for p in items:
        status, spec = p.get("status", {}), p.get("spec", {})
        rows.append((p["metadata"].get("namespace", ""), p["metadata"]["name"], status.get("phase", ""),
                     spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>",
                     str(spec.get("priority", 0)), status.get("message") or ""))
    return rows


def node_rows(items: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [("NAME", "CPU", "MEMORY", "PODS", "UNSCHEDULABLE", "TAINTS")]
    for n in items:
        alloc = n.get("status", {}).get("allocatable", {})
        spec = n.get("spec", {})
        taints = ",".join(f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in spec.get("taints", []))
        rows.append((n["metadata"]["name"], str(alloc.get("cpu", "")), str(alloc.get("memory", "")),
                     str(alloc.get("pods", "")), str(bool(spec.get("unschedulable", False))).lower(), taints or "<none>"))
    return rows
