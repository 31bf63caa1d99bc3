"""Running `berth up` as a user does, for the tests that drive a whole cluster through its CLI,
kubectl or a browser: a subprocess with its own embedded stack and state directory."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = """
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 2Gi, pods: "10"}}
---
kind: Pod
metadata: {name: p1, labels: {app: web}}
spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}
---
kind: Pod
metadata: {name: p2, namespace: team}
spec: {containers: [{name: c}]}
"""


def berth(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "berth", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def wait_line(proc: subprocess.Popen[str], prefix: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith(prefix):
            return line
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"no {prefix!r} line; exit code {proc.poll()}")


def reap(proc: subprocess.Popen[str], err: Any) -> None:
    """Kill berth up if a failed assertion left it running; close its pipes."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)
    assert proc.stdout is not None
    proc.stdout.close()
    err.close()


def user_env(state: Path) -> dict[str, str]:
    """A user's environment: no endpoints or cluster of the test run's own, the state dir given."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("KAFKA_BOOTSTRAP_SERVERS", "DATABASE_URL", "BERTH_URL", "BERTH_TOKEN", "BERTH_TOPIC_PREFIX")}
    env["BERTH_STATE_DIR"] = str(state)
    return env


def start_up(state: Path, env: dict[str, str], err: Any, *extra: str,
             sigint_ignored: bool = False) -> subprocess.Popen[str]:
    """`berth up`; `sigint_ignored`: as a background job of a script starts it, SIGINT ignored."""
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None
    return subprocess.Popen([sys.executable, "-m", "berth", "up", "--state-dir", str(state), *extra],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err, text=True, preexec_fn=ignore)




@dataclass(frozen=True)
class Running:
    """A `berth up` ready to use: the user's environment and what it told them."""

    env: dict[str, str]
    kubeconfig: str
    info: dict[str, Any]
    """Its berth.json."""


@contextlib.contextmanager
def running(state: Path, tmp_path: Path, *extra: str) -> Iterator[Running]:
    """`berth up` on `state` until the block ends (SIGTERM, as Ctrl-C), its pipes closed after."""
    env = user_env(state)
    err = (tmp_path / "up.err").open("w")
    proc = start_up(state, env, err, *extra)
    try:
        wait_line(proc, "berth ready: ", 60)
        kubeconfig = wait_line(proc, "berth kubectl: ", 5).strip().split("KUBECONFIG=", 1)[1]
        yield Running(env, kubeconfig, json.loads((state / "berth.json").read_text()))
    finally:
        proc.terminate()
        proc.wait(60)
        reap(proc, err)
