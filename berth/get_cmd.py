"""`berth get nodes|pods [NAME] [-n NS | -A] [-l SELECTOR] [-o table|wide|name|json|yaml]`: list what the
read model holds, as kubectl lists it."""

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
    p.add_argument("-n", "--namespace", help="the namespace of the pods (default: default, as kubectl)")
    p.add_argument("-A", "--all-namespaces", action="store_true", help="pods of every namespace")
    p.add_argument("-l", "--selector", default="", metavar="SELECTOR",
                   help="only objects whose labels match, in kubectl's syntax (app=web,tier in (a,b),!gone)")
    p.add_argument("-o", "--output", choices=("table", "wide", "name", "json", "yaml"), default="table",
                   help="table (default), wide (labels too), name (kind/name), json or yaml")
    add_cluster_args(p)
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    gateway = Gateway(find_cluster(args))
    pods = args.kind.startswith("po")
    namespace = args.namespace or "default"
    if pods:
        if args.name:
            path = f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(args.name)}"
        else:
            path = "/api/v1/pods" if args.all_namespaces else f"/api/v1/namespaces/{quote(namespace)}/pods"
    else:
        path = f"/api/v1/nodes/{quote(args.name)}" if args.name else "/api/v1/nodes"
    if args.selector and not args.name:
        path += f"?labelSelector={quote(args.selector)}"
    data = gateway.get(path)
    items = data["items"] if "items" in data else [data]
    if args.output == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif args.output == "yaml":
        sys.stdout.write(yaml.safe_dump(data, sort_keys=False))
    elif args.output == "name":
        sys.stdout.write("".join(f"{'pod' if pods else 'node'}/{i['metadata']['name']}\n" for i in items))
    else:
        rows = pod_rows(items) if pods else node_rows(items)
        if args.output == "wide":
            rows = [(*r, "LABELS" if n == 0 else _labels(items[n - 1])) for n, r in enumerate(rows)]
        if len(rows) == 1 and pods and not args.all_namespaces:
            sys.stdout.write(f"No resources found in {namespace} namespace.\n")
        else:
            sys.stdout.write(table(rows))
    return 0


def _labels(item: dict[str, Any]) -> str:
    labels = item.get("metadata", {}).get("labels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"


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
