"""`berth describe pod NAME [-n NS]`: one pod as kubectl describes it, with its scheduling events."""

from __future__ import annotations

import argparse
import sys
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
    sys.stdout.write(render(pod))
    return 0


def _requests(spec: dict[str, Any]) -> str:
    totals: list[str] = []
    for c in spec.get("containers", []):
        for name, q in c.get("resources", {}).get("requests", {}).items():
            totals.append(f"{c.get('name', '?')}: {name}={q}")
    return ", ".join(totals) or "<none>"


def render(pod: dict[str, Any]) -> str:
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
    out += ["  " + line for line in table(conds).splitlines()]
    events = pod.get("schedulingEvents", [])
    if events:
        out.append("Events:")
        rows = [("Type", "Reason", "Time", "Message")]
        rows += [(e["type"], e["reason"], e["time"], e["message"]) for e in events]
        out += ["  " + line for line in table(rows).splitlines()]
    else:
        out.append("Events:  <none>")
    return "\n".join(out) + "\n"
