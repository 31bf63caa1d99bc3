"""`berth up [--state-dir DIR] [--filter-workers N]`: the whole cluster in the foreground.

Starts the embedded broker and database (or uses KAFKA_BOOTSTRAP_SERVERS / DATABASE_URL), then every
service of `berth.services.SERVICES` as a child process in its own process group, waits until each
answers /healthz, writes DIR/berth.json and prints `berth ready: <gateway URL>`. Ctrl-C or SIGTERM
stops the services (newest first), then the stack; no process is left behind.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import FrameType
from typing import Any

from .client import EXIT_ERROR, STATE_FILE, CliError, run_guarded
from .services import SERVICES, ServiceSpec, UpOptions, filter_workers_env

REPO_ROOT = Path(__file__).resolve().parents[1]


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("up", help="run the cluster (embedded broker, database, services)",
                                                description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--state-dir", metavar="DIR", help="data, logs and berth.json (default: $BERTH_STATE_DIR or ./.berth)")
    p.add_argument("--filter-workers", type=int, default=1, metavar="N", help="filter service replicas (default 1)")
    p.add_argument("--port", type=int, default=0, help="gateway port (default: any free port)")
    p.add_argument("--ready-timeout", type=float, default=60.0, metavar="S", help="seconds to wait for each service")
    p.set_defaults(run=run_guarded(run))


class _Child:
    def __init__(self, spec: ServiceSpec, index: int, port: int, process: Any) -> None:
        self.spec, self.index, self.port, self.process = spec, index, port, process

    @property
    def label(self) -> str:
        return self.spec.name if self.index == 0 else f"{self.spec.name}-{self.index}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    if args.filter_workers < 1:
        raise CliError("--filter-workers must be at least 1", 2)
    from shared.adapters.embedded import EmbeddedStack
    from shared.settings import load_settings

    signal.signal(signal.SIGTERM, _raise_interrupt)  # one shutdown path for Ctrl-C and SIGTERM
    settings = load_settings()
    state = Path(args.state_dir or settings.state_dir).resolve()
    stack = EmbeddedStack(state, settings=settings)
    children: list[_Child] = []
    state_file = state / STATE_FILE
    try:
        endpoints = stack.start()
        token = os.environ.get("BERTH_API_TOKEN", "").strip() or secrets.token_urlsafe(24)
        env = _service_env(endpoints.kafka_bootstrap_servers, endpoints.database_url, settings.topic_prefix, token)
        children = _start_services(state, env, UpOptions(filter_workers=args.filter_workers), args.port)
        for child in children:
            _wait_healthy(child, args.ready_timeout)
        gateway = next(c for c in children if c.spec.gateway)
        _write_state(state_file, {
            "gateway_url": gateway.url, "api_token": token,
            "kafka_bootstrap_servers": endpoints.kafka_bootstrap_servers, "database_url": endpoints.database_url,
            "topic_prefix": settings.topic_prefix, "state_dir": str(state),
            "services": {c.label: c.url for c in children},
            "pids": {**endpoints.pids, **{c.label: c.process.pid for c in children}},
        })
        print(f"berth ready: {gateway.url} (state in {state_file}; Ctrl-C to stop)", flush=True)
        return _watch(children)
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
        for child in reversed(children):
            child.process.stop(timeout=10)
        stack.stop()
        state_file.unlink(missing_ok=True)
        print("berth stopped", file=sys.stderr, flush=True)


def _service_env(bootstrap: str, database_url: str, prefix: str, token: str) -> dict[str, str]:
    path = os.environ.get("PYTHONPATH", "")
    return {
        **os.environ,
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "DATABASE_URL": database_url, "BERTH_TOPIC_PREFIX": prefix,
        "BERTH_API_TOKEN": token, "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{path}" if path else str(REPO_ROOT),
    }


def _start_services(state: Path, env: dict[str, str], options: UpOptions, gateway_port: int) -> list[_Child]:
    from shared.adapters.processes import ManagedProcess, free_port

    logs = state / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    children: list[_Child] = []
    for spec in SERVICES:
        for i in range(spec.replicas(options)):
            port = gateway_port if spec.gateway and gateway_port else free_port()
            label = spec.name if i == 0 else f"{spec.name}-{i}"
            child_env = {**env, **filter_workers_env(options), **spec.env(options),
                         "BERTH_SERVICE": label, "BERTH_HTTP_HOST": "127.0.0.1", "BERTH_HTTP_PORT": str(port)}
            # SIGTERM on parent death: a SIGKILLed `berth up` still lets each service stop cleanly.
            process = ManagedProcess(label, [sys.executable, "-m", spec.module], log_path=logs / f"{label}.log",
                                     stop_signal=signal.SIGTERM, death_signal=signal.SIGTERM, env=child_env,
                                     cwd=REPO_ROOT)
            process.start()
            children.append(_Child(spec, i, port, process))
    return children


def _wait_healthy(child: _Child, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not child.process.running():
            raise CliError(f"{child.label} exited with code {child.process.exit_code()}:\n{child.process.log_tail()}",
                           EXIT_ERROR)
        try:
            with urllib.request.urlopen(child.url + "/healthz", timeout=1) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.1)
    raise CliError(f"{child.label} was not healthy after {timeout:.0f}s:\n{child.process.log_tail()}", EXIT_ERROR)


def _write_state(path: Path, data: dict[str, Any]) -> None:
    """Atomically, readable by the owner only: it holds the API token."""
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
    tmp.replace(path)


def _watch(children: list[_Child]) -> int:
    """Block until interrupted; a service that dies takes the cluster down with a non-zero code."""
    while True:
        for child in children:
            if not child.process.running():
                print(f"error: {child.label} exited with code {child.process.exit_code()}; stopping\n"
                      f"{child.process.log_tail()}", file=sys.stderr, flush=True)
                return EXIT_ERROR
        time.sleep(0.5)
