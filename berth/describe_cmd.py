"""`berth describe pod NAME [-n NS]`: one pod as kubectl describes it, with its scheduling events."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from .client import Gateway, add_cluster_args, find_cluster, run_guarded
from .get_cmd import table


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("describe", help="show a pod's scheduling state and events")
    p.add_argument("kind", choices=("pod", "pods", "po"))
    p.add_argument("name")
    p.add_argument("-n", "--namespace", default="default")
    add_cluster_args(p)
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    pod = Gateway(find_cluster(args)).get(
        f"/api/v1/namespaces/{quote(args.namespace)}/pods/{quote(args.name)}?events=true")
    sys.stdout.write(render(pod, now=datetime.now(UTC)))
    return 0


def human_duration(seconds: float) -> str:
    """kubectl's age (apimachinery's HumanDuration): coarser the older it is."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        return f"{years}y{days % 365}d" if days % 365 else f"{years}y"
    return f"{years}y"


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
