"""`berth demo [-f FILE] [--filter-workers N]`: what `make run` shows. Starts the whole cluster
(`berth up` on the embedded stack), applies a sample workload through the gateway, prints each pod as
it is bound (or reported pending with its reason), then a summary, and stops the cluster."""

from __future__ import annotations

import argparse
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .client import CliError, Gateway, find_cluster, run_guarded
from .get_cmd import pod_rows, table
from .kubeconfig import FILE as KUBECONFIG_FILE
from .services import check_filter_workers

DEFAULT_WORKLOAD = "examples/cluster-small.yaml"
ASK_LOG_EVERY_S = 1.0
"""How often the event log is asked about a pod never listed, while it says nothing of it."""


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("demo", help="start a cluster, schedule a sample workload, show it")
    p.add_argument("-f", "--filename", default=DEFAULT_WORKLOAD, help=f"workload to apply (default {DEFAULT_WORKLOAD})")
    p.add_argument("--filter-workers", type=int, default=None, metavar="N",
                   help="filter service replicas (default: one per four cores, one to four, as `berth up`)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds to wait for the pods to settle")
    p.add_argument("--web", action="store_true",
                   help="keep the cluster up after the demo and print the web view's URL (Ctrl-C stops it)")
    p.set_defaults(run=run_guarded(run))


def run(args: argparse.Namespace) -> int:
    workers: list[str] = []
    if args.filter_workers is not None:
        check_filter_workers(args.filter_workers)
        workers = ["--filter-workers", str(args.filter_workers)]
    with tempfile.TemporaryDirectory(prefix="berth-demo-") as tmp:
        state = Path(tmp)
        up = subprocess.Popen(
            [sys.executable, "-m", "berth", "up", "--state-dir", str(state), *workers],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "BERTH_LOG_LEVEL": "WARNING"},
        )
        try:
            _wait_ready(up)
            args.state_dir = str(state)
            gateway = Gateway(find_cluster(args), timeout=120)
            body = Path(args.filename).read_bytes()
            result = gateway.request("POST", "/apis/berth.dev/v1/apply", body, content_type="application/yaml")
            print(f"applied {args.filename}: {len(result['items'])} objects")
            expected = {f"{item.get('namespace') or 'default'}/{item['name']}"
                        for item in result["items"] if item["kind"] == "Pod"}
            pods = watch_pods(gateway, expected, args.timeout)
            print()
            sys.stdout.write(table(pod_rows(pods)))
            phases = Counter(p.get("status", {}).get("phase", "") for p in pods)
            print("\nsummary: " + ", ".join(f"{n} {phase}" for phase, n in sorted(phases.items())))
            if args.web:
                print(f"berth ui: {gateway.info.gateway_url}/ui/ (sign in with viewer_token from "
                      f"{state / 'berth.json'}; Ctrl-C to stop)", flush=True)
                print(f"berth kubectl: export KUBECONFIG={state / KUBECONFIG_FILE} (kubectl get pods, "
                      "describe, -w ...)", flush=True)
                try:
                    up.wait()
                except KeyboardInterrupt:
                    pass
            return 0
        finally:
            up.send_signal(signal.SIGTERM)
            try:
                up.wait(60)
            except subprocess.TimeoutExpired:
                up.kill()


def _wait_ready(up: subprocess.Popen[str]) -> None:
    assert up.stdout is not None
    for line in up.stdout:
        print(line.rstrip(), flush=True)  # its progress while it starts (or why it failed), then where it is
        if line.startswith("berth ready:"):
            return
    raise CliError(f"berth up exited ({up.wait()}) before it was ready")


def left(gateway: Gateway, key: str) -> str:
    """How the pod namespace/name left the cluster by the event log ("evicted", "deleted"), or ""
    where it has not (or the log does not know the pod yet). The log's pod filter also names a
    preemptor's victims: only the pod's own eviction or deletion counts."""
    kinds = "PodSubmitted,PodEvicted,PodDeleted"
    try:
        page = gateway.get(f"/apis/berth.dev/v1/events?pod={quote(key, safe='')}&type={kinds}&limit=500")
    except CliError:
        return ""
    events = [item["event"] for item in page.get("items") or []]
    uids = {e["payload"]["pod"]["metadata"].get("uid") for e in events if e["type"] == "PodSubmitted"}
    gone = [e["type"] for e in events if e["type"] != "PodSubmitted" and e["payload"].get("uid") in uids]
    return ("evicted" if gone[-1] == "PodEvicted" else "deleted") if gone else ""


def watch_pods(gateway: Gateway, expected: set[str], timeout: float, *, poll_s: float = 0.3,
               quiet_s: float = 3.0, unseen_s: float = 10.0) -> list[dict[str, Any]]:
    """Print pods as their scheduling outcome appears, and those that leave the cluster (a preemption's
    victims); return the pods once every listed one has an outcome and nothing has changed for
    `quiet_s`. A pod of `expected` (namespace/name) never listed may have been evicted before the
    first look: the event log says so (`left`), or else after `unseen_s` without a change it is
    waited for no longer."""
    seen: dict[str, str] = {}
    listed: set[str] = set()
    ever: set[str] = set()
    gone: set[str] = set()
    """Pods of `expected` never listed that the log says have left."""
    asked_at: dict[str, float] = {}
    """Pod -> when the log was last asked about it (at most once every `ASK_LOG_EVERY_S`)."""
    deadline = time.monotonic() + timeout
    quiet_since = time.monotonic()
    while True:
        pods = gateway.get("/api/v1/pods")["items"]
        now_listed: set[str] = set()
        for p in pods:
            key = f"{p['metadata'].get('namespace', 'default')}/{p['metadata']['name']}"
            now_listed.add(key)
            status, spec = p.get("status", {}), p.get("spec", {})
            line = (f"bound     {key} -> {spec['nodeName']}" if spec.get("nodeName")
                    else f"pending   {key}: {status['message']}" if status.get("message") else "")
            if line and seen.get(key) != line:
                seen[key] = line
                quiet_since = time.monotonic()
                print(line, flush=True)
        for key in sorted(listed - now_listed):
            print(f"removed   {key} ({left(gateway, key) or 'evicted or deleted'})", flush=True)
            seen.pop(key, None)
            quiet_since = time.monotonic()
        listed = now_listed
        ever |= now_listed
        quiet = time.monotonic() - quiet_since
        settled = all(key in seen for key in listed)
        if settled and quiet > quiet_s:
            for key in sorted(expected - ever - gone):
                now = time.monotonic()
                if now - asked_at.get(key, -math.inf) < ASK_LOG_EVERY_S:
                    continue  # a page of the log for each poll would be most of what the demo asks
                asked_at[key] = now
                how = left(gateway, key)
                if how:
                    gone.add(key)
                    print(f"removed   {key} ({how})", flush=True)
        if settled and (quiet > unseen_s or (quiet > quiet_s and expected <= ever | gone)) \
                or time.monotonic() > deadline:
            for key in sorted(expected - ever - gone):
                print(f"removed   {key} (evicted or deleted)", flush=True)
            return pods
        time.sleep(poll_s)
