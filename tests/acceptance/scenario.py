"""Checking a simulation report against an expected-outcome file (format: tests/scenarios/README.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from shared.scheduler.outcome import PodOutcome, SimulationReport


def load_expected(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return data


def mismatches(report: SimulationReport, expected: dict[str, Any]) -> list[str]:
    """Every way the report differs from the expectation; empty when it matches."""
    by_key: dict[str, PodOutcome] = {f"{p.namespace}/{p.name}": p for p in report.pods}
    problems: list[str] = []
    for key, want in (expected.get("pods") or {}).items():
        got = by_key.get(key)
        if got is None:
            problems.append(f"{key}: missing from the report")
            continue
        problems.extend(f"{key}: {p}" for p in _pod_mismatches(got, want, by_key))
    for group in expected.get("distinct") or []:
        nodes = [by_key[k].nodeName for k in group if k in by_key]
        if len(set(nodes)) != len(nodes) or None in nodes:
            problems.append(f"distinct {group}: got nodes {nodes}")
    return problems


def _pod_mismatches(got: PodOutcome, want: dict[str, Any], by_key: dict[str, PodOutcome]) -> list[str]:
    out: list[str] = []
    if "node" in want and (got.phase != "Bound" or got.nodeName != want["node"]):
        out.append(f"want bound to {want['node']}, got {got.phase} {got.nodeName} ({got.message})")
    if "nodeIn" in want and (got.phase != "Bound" or got.nodeName not in want["nodeIn"]):
        out.append(f"want bound to one of {want['nodeIn']}, got {got.phase} {got.nodeName} ({got.message})")
    if want.get("unschedulable"):
        if got.phase != "Pending":
            out.append(f"want unschedulable, got {got.phase} {got.nodeName}")
        message = got.message or ""
        for reason in want.get("reasons") or []:
            if reason not in message:
                out.append(f"message lacks {reason!r}: {message!r}")
        if "message" in want and message.rstrip(".") != str(want["message"]).rstrip("."):
            out.append(f"message\n   want {want['message']!r}\n   got  {message!r}")
    if want.get("pending") and (got.phase != "Pending" or got.attempts != 0):
        out.append(f"want pending without an attempt, got {got.phase} after {got.attempts} attempts")
    if want.get("deleted") and got.phase != "Deleted":
        out.append(f"want deleted, got {got.phase} {got.nodeName}")
    if "preempted" in want:
        key = f"{got.namespace}/{got.name}"
        victims = sorted(k for k, p in by_key.items() if p.preemptedBy == key)
        if victims != sorted(want["preempted"]):
            out.append(f"want victims {sorted(want['preempted'])}, got {victims}")
    return out
