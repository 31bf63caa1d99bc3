"""`berth describe pod NAME [-n NS]` or `berth describe node NAME`: one object as kubectl describes it (a
pod with its scheduling events, a node with its taints, pods and allocated resources)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any
from urllib.parse import quote

from shared.model import quantity
from shared.model.age import human_duration

from .client import Gateway, add_cluster_args, find_cluster, run_guarded
from .get_cmd import table


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("describe", help="show a pod (scheduling state, events) or a node "
                                                "(taints, pods, allocated resources)")
    p.add_argument("kind", choices=("pod", "pods", "po", "node", "nodes", "no"),
                   help="pod or node")
    p.add_argument("name",
                   help="the object's name")
    p.add_argument("-n", "--namespace", default="default", help="the pod's namespace (default: default)")
    add_cluster_args(p)
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    gateway = Gateway(find_cluster(args))
    if args.kind.startswith("no"):
        node = gateway.get(f"/api/v1/nodes/{quote(args.name)}")
        # As kubectl: the node's pods that have not terminated (a pod it refused has failed).
        running = f"spec.nodeName={args.name},status.phase!=Succeeded,status.phase!=Failed"
        pods = gateway.get(f"/api/v1/pods?fieldSelector={quote(running)}")["items"]
        sys.stdout.write(render_node(node, pods))
        return 0
    path = f"/api/v1/namespaces/{quote(args.namespace)}/pods/{quote(args.name)}"
    pod = gateway.get(path + "?events=true&includeDeleted=true")
    sys.stdout.write(render(pod, now=datetime.now(UTC)))
    return 0


def _sum(pods: list[dict[str, Any]], section: str, resource: str) -> Fraction:
    """A resource's total over the pods' containers (what kubectl's describe node adds up)."""
    total = Fraction(0)
    for p in pods:
        for c in p.get("spec", {}).get("containers", []):
            q = c.get("resources", {}).get(section, {}).get(resource)
            if q is not None:
                total += quantity.parse_quantity(q)
    return total


def _amount(resource: str, value: Fraction) -> str:
    if resource == "cpu":
        return quantity.format_milli_cpu(int(value * 1000))
    whole = int(value)
    for suffix, size in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if whole and whole % size == 0:
            return f"{whole // size}{suffix}"
    return str(whole)


def _share(resource: str, value: Fraction, allocatable: dict[str, Any]) -> str:
    total = quantity.parse_quantity(allocatable.get(resource, 0)) if allocatable.get(resource) else Fraction(0)
    percent = int(value * 100 / total) if total else 0
    return f"{_amount(resource, value)} ({percent}%)"


def render_node(node: dict[str, Any], pods: list[dict[str, Any]]) -> str:
    """kubectl describe node's shape: labels, taints, capacity, the pods on it, what they request."""
    meta, spec, status = node.get("metadata", {}), node.get("spec", {}), node.get("status", {})
    allocatable = status.get("allocatable", {})
    taints = [f"{t['key']}={t.get('value', '')}:{t['effect']}".replace("=:", ":") for t in spec.get("taints", [])]
    out = [f"{'Name:':<20}{meta.get('name', '')}",
           f"{'Labels:':<20}" + ("\n" + " " * 20).join(f"{k}={v}" for k, v in sorted(meta.get("labels", {}).items()))
           if meta.get("labels") else f"{'Labels:':<20}<none>",
           f"{'Taints:':<20}" + ("\n" + " " * 20).join(taints) if taints else f"{'Taints:':<20}<none>",
           f"{'Unschedulable:':<20}{str(bool(spec.get('unschedulable', False))).lower()}"]
    conditions = status.get("conditions", [])
    out.append("Conditions:" if conditions else "Conditions:         <none>")
    if conditions:
        rows: list[tuple[str, ...]] = [("Type", "Status", "Reason", "Message")]
        rows += [(c["type"], c["status"], c.get("reason", ""), c.get("message", "")) for c in conditions]
        out += ["  " + line for line in table(rows, padding=2).splitlines()]
    for title, values in (("Capacity", status.get("capacity", {})), ("Allocatable", allocatable)):
        if values:
            out.append(f"{title}:")
            width = max(len(k) for k in values) + 2
            out += [f"  {k + ':':<{width}}{v}" for k, v in values.items()]
    out.append(f"Non-terminated Pods:          ({len(pods)} in total)")
    rows = [("Namespace", "Name", "CPU Requests", "CPU Limits", "Memory Requests", "Memory Limits"),
            ("---------", "----", "------------", "----------", "---------------", "-------------")]
    for p in pods:
        one = [p]
        rows.append((p["metadata"].get("namespace", ""), p["metadata"]["name"],
                     _share("cpu", _sum(one, "requests", "cpu"), allocatable),
                     _share("cpu", _sum(one, "limits", "cpu"), allocatable),
                     _share("memory", _sum(one, "requests", "memory"), allocatable),
                     _share("memory", _sum(one, "limits", "memory"), allocatable)))
    out += ["  " + line for line in table(rows, padding=2).splitlines()]
    out += ["Allocated resources:", "  (Total limits may be over 100 percent, i.e., overcommitted.)"]
    rows = [("Resource", "Requests", "Limits"), ("--------", "--------", "------")]
    rows += [(r, _share(r, _sum(pods, "requests", r), allocatable), _share(r, _sum(pods, "limits", r), allocatable))
             for r in ("cpu", "memory")]
    out += ["  " + line for line in table(rows, padding=2).splitlines()]
    out.append("Events:              <none>")
    return "\n".join(out) + "\n"




def _age(event: dict[str, Any], now: datetime) -> str:
    """kubectl's Age column: the last sighting, and for a repeated event its count and first."""
    last = human_duration((now - datetime.fromisoformat(event["lastTimestamp"])).total_seconds())
    if event.get("count", 1) <= 1:
        return last
    first = human_duration((now - datetime.fromisoformat(event["firstTimestamp"])).total_seconds())
    return f"{last} (x{event['count']} over {first})"


def _requests(spec: dict[str, Any]) -> str:
    totals: list[str] = []
    for c in spec.get("containers", []):
        for name, q in c.get("resources", {}).get("requests", {}).items():
            totals.append(f"{c.get('name', '?')}: {name}={q}")
    return ", ".join(totals) or "<none>"


def render(pod: dict[str, Any], *, now: datetime) -> str:
    meta, spec, status = pod.get("metadata", {}), pod.get("spec", {}), pod.get("status", {})
    fields = [
        ("Name", meta.get("name", "")),
        ("Namespace", meta.get("namespace", "")),
        ("UID", meta.get("uid", "")),
        ("Priority", str(spec.get("priority", 0))),
        ("Priority Class Name", spec.get("priorityClassName") or "<none>"),
        ("Preemption Policy", spec.get("preemptionPolicy") or "<none>"),
        ("Scheduler", spec.get("schedulerName") or "default-scheduler"),
        ("Node", spec.get("nodeName") or "<none>"),
        ("Nominated Node", status.get("nominatedNodeName") or "<none>"),
        ("Labels", ", ".join(f"{k}={v}" for k, v in meta.get("labels", {}).items()) or "<none>"),
        ("Status", status.get("phase", "")),
        ("Requests", _requests(spec)),
    ]
    if status.get("reason"):
        fields.append(("Reason", status["reason"]))
    if status.get("preemptedBy"):
        fields.append(("Preempted By", status["preemptedBy"]))
    if status.get("message"):
        fields.append(("Message", status["message"]))
    width = max(len(k) for k, _ in fields) + 2
    out = [f"{k + ':':<{width}}{v}" for k, v in fields]
    out.append("Conditions:")
    conds = [("Type", "Status", "Reason", "Message")]
    conds += [(c["type"], c["status"], c.get("reason", ""), c.get("message", "")) for c in status.get("conditions", [])]
    out += ["  " + line for line in table(conds, padding=2).splitlines()]
    events = pod.get("schedulingEvents", [])
    if events:
        out.append("Events:")
        rows = [("Type", "Reason", "Age", "From", "Message"), ("----", "------", "----", "----", "-------")]
        rows += [(e["type"], e["reason"], _age(e, now), e["from"], e["message"].strip()) for e in events]
        out += ["  " + line for line in table(rows, padding=2).splitlines()]
    else:
        out.append("Events:  <none>")
    return "\n".join(out) + "\n"
