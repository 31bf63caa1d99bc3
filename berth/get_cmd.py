"""`berth get pods|nodes|priorityclasses|pdb|namespaces [NAME] [-n NS | -A] [-l SELECTOR] [-o FORMAT]`:
list what the read model holds, as kubectl lists it (FORMAT: table, wide, name, json, yaml)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import yaml

from .client import EXIT_ERROR, CliError, Gateway, add_cluster_args, find_cluster, run_guarded


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("get", help="list pods, nodes, priority classes, budgets or namespaces")
    p.add_argument("kind", choices=sorted(KINDS), metavar="KIND",
                   help="pods (po), nodes (no), priorityclasses (pc), poddisruptionbudgets (pdb), namespaces (ns)")
    p.add_argument("name", nargs="?", help="one object by name")
    p.add_argument("-n", "--namespace", help="the namespace of the pods (default: default, as kubectl)")
    p.add_argument("-A", "--all-namespaces", action="store_true", help="pods of every namespace")
    p.add_argument("-l", "--selector", default="", metavar="SELECTOR",
                   help="only objects whose labels match, in kubectl's syntax (app=web,tier in (a,b),!gone)")
    p.add_argument("-o", "--output", choices=("table", "wide", "name", "json", "yaml"), default="table",
                   help="table (default), wide (labels too), name (kind/name), json or yaml")
    add_cluster_args(p)
    p.set_defaults(run=run_guarded(run))


KINDS = {"pods": "pod", "pod": "pod", "po": "pod", "nodes": "node", "node": "node", "no": "node",
         "priorityclasses": "priorityclass", "priorityclass": "priorityclass", "pc": "priorityclass",
         "poddisruptionbudgets": "poddisruptionbudget", "poddisruptionbudget": "poddisruptionbudget",
         "pdb": "poddisruptionbudget", "namespaces": "namespace", "namespace": "namespace", "ns": "namespace"}


def _path(kind: str, namespace: str, every: bool) -> str:
    """The list's path at the gateway; pods and budgets are namespaced."""
    if kind == "pod":
        return "/api/v1/pods" if every else f"/api/v1/namespaces/{quote(namespace)}/pods"
    if kind == "poddisruptionbudget":
        return ("/apis/policy/v1/poddisruptionbudgets" if every
                else f"/apis/policy/v1/namespaces/{quote(namespace)}/poddisruptionbudgets")
    return {"node": "/api/v1/nodes", "priorityclass": "/apis/scheduling.k8s.io/v1/priorityclasses",
            "namespace": "/api/v1/namespaces"}[kind]


def run(args: argparse.Namespace) -> int:
    gateway = Gateway(find_cluster(args))
    kind = KINDS[args.kind]
    pods = kind == "pod"
    namespace = args.namespace or "default"
    if args.name and kind in ("pod", "node"):
        path = (f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(args.name)}" if pods
                else f"/api/v1/nodes/{quote(args.name)}")
    else:
        path = _path(kind, namespace, args.all_namespaces)
        if args.selector:
            path += f"?labelSelector={quote(args.selector)}"
    data = gateway.get(path)
    if args.name and "items" in data:  # the kinds served only as lists
        data = {"items": [i for i in data["items"] if i["metadata"]["name"] == args.name]}
        if not data["items"]:
            raise CliError(f'error: {kind}s "{args.name}" not found', EXIT_ERROR)
        data = data["items"][0]
    items = data["items"] if "items" in data else [data]
    if args.output == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif args.output == "yaml":
        sys.stdout.write(yaml.safe_dump(data, sort_keys=False))
    elif args.output == "name":
        sys.stdout.write("".join(f"{kind}/{i['metadata']['name']}\n" for i in items))
    else:
        rows = ROWS[kind](items)
        if args.output == "wide":
            rows = [(*r, "LABELS" if n == 0 else _labels(items[n - 1])) for n, r in enumerate(rows)]
        if len(rows) == 1 and kind in ("pod", "poddisruptionbudget") and not args.all_namespaces:
            sys.stdout.write(f"No resources found in {namespace} namespace.\n")
        else:
            sys.stdout.write(table(rows))
    return 0


def _labels(item: dict[str, Any]) -> str:
    labels = item.get("metadata", {}).get("labels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"


def table(rows: Sequence[tuple[str, ...]], padding: int = 3) -> str:
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
        # As kubectl: the status' reason (OutOfcpu) where there is one, else the phase.
        rows.append((p["metadata"].get("namespace", ""), p["metadata"]["name"],
                     status.get("reason") or status.get("phase", ""),
                     spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>",
                     str(spec.get("priority", 0)), status.get("message") or ""))
    return rows


def node_rows(items: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [("NAME", "CPU", "MEMORY", "PODS", "UNSCHEDULABLE", "TAINTS")]
    for n in items:
        alloc = n.get("status", {}).get("allocatable", {})
        spec = n.get("spec", {})
        taints = ",".join(f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in spec.get("taints", []))
        unschedulable = str(bool(spec.get("unschedulable", False))).lower()
        rows.append((n["metadata"]["name"], str(alloc.get("cpu", "")), str(alloc.get("memory", "")),
                     str(alloc.get("pods", "")), unschedulable, taints or "<none>"))
    return rows


def priority_class_rows(items: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [("NAME", "VALUE", "GLOBAL-DEFAULT", "PREEMPTIONPOLICY")]
    rows += [(i["metadata"]["name"], str(i.get("value", 0)), str(bool(i.get("globalDefault", False))).lower(),
              i.get("preemptionPolicy") or "PreemptLowerPriority") for i in items]
    return rows


def pdb_rows(items: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [("NAMESPACE", "NAME", "MIN AVAILABLE", "MAX UNAVAILABLE")]
    for i in items:
        spec = i.get("spec", {})
        rows.append((i["metadata"].get("namespace", ""), i["metadata"]["name"], str(spec.get("minAvailable", "N/A")),
                     str(spec.get("maxUnavailable", "N/A"))))
    return rows


def namespace_rows(items: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    return [("NAME", "STATUS"), *((i["metadata"]["name"], i.get("status", {}).get("phase", "Active")) for i in items)]


ROWS = {"pod": pod_rows, "node": node_rows, "priorityclass": priority_class_rows, "poddisruptionbudget": pdb_rows,
        "namespace": namespace_rows}
