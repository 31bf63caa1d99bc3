"""`berth up [--state-dir DIR] [--filter-workers N]`: the whole cluster in the foreground.

Starts the embedded broker and database (or uses KAFKA_BOOTSTRAP_SERVERS / DATABASE_URL), then every
service of `berth.services.SERVICES` as a child process in its own process group, waits until each
answers /healthz, writes DIR/berth.json and prints `berth ready: <gateway URL>`. The gateway serves
HTTPS with a certificate for loopback from a private authority in DIR/tls (`ca_file` in berth.json:
what clients trust). A service, the
broker or the database that exits is restarted with backoff (`berth.supervisor`,
`berth.supervised_cluster`); one that keeps dying stops the cluster. The embedded broker keeps its
log in memory: at every start its log is rebuilt from the event store.
Restarts are served at the supervisor's `/metrics` (its URL is in berth.json). Ctrl-C or SIGTERM
stops the services (newest first), the projector once it has stored the log to its end, then the
stack; no process is left behind.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from .client import EXIT_ERROR, STATE_FILE, CliError, run_guarded
from .files import write_atomically
from .kubeconfig import FILE as KUBECONFIG_FILE
from .services import UpOptions, check_filter_workers, check_queues, up_options
from .state_lock import holding

if TYPE_CHECKING:  # the cluster's parts are imported when it starts, not for every `berth` command
    from berth.stack.embedded import EmbeddedStack
    from shared.settings import Settings

    from .fleet import Fleet
    from .supervisor import Supervisor


PROJECTOR = "projector"
DRAIN_TIMEOUT_S = 30.0
"""The most a stopping cluster waits for the projector to store the events written last."""


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("up", help="run the cluster (embedded broker, database, services)",
                                                description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--state-dir", metavar="DIR",
                   help="data, logs and berth.json (default: $BERTH_STATE_DIR or ./.berth)")
    p.add_argument("--filter-workers", type=int, default=None, metavar="N",
                   help="filter service replicas (default: one per four cores, one to four, the measured best; "
                        "more than one propose, on a machine of three cores or fewer only while the queue's "
                        "ranking is dear, unless BERTH_QUEUE_PROPOSE says otherwise)")
    p.add_argument("--queues", type=int, default=None, metavar="Q",
                   help="queues sharing the cluster, each scheduling a share of the pods with whole filter workers "
                        "of its own (default: one per filter worker, at most four, as many as have whole workers, "
                        "on a machine of more than three cores, the measured best; one on fewer)")
    p.add_argument("--port", type=int, default=0, help="gateway port (default: any free port)")
    p.add_argument("--ready-timeout", type=float, default=60.0, metavar="S", help="seconds to wait for each service")
    p.set_defaults(run=run_guarded(run))


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    options = up_options(args.filter_workers, queues=args.queues)
    check_filter_workers(options.filter_workers)
    check_queues(options.queues, options.filter_workers)
    from shared.settings import load_settings

    settings = load_settings()
    state = Path(args.state_dir or settings.state_dir).resolve()
    with holding(state):
        return _serve(args, options, settings, state)


def _serve(args: argparse.Namespace, options: UpOptions, settings: Settings, state: Path) -> int:
    from berth.stack.certificates import ensure_loopback_tls
    from berth.stack.embedded import EmbeddedStack

    from .fleet import Fleet, ServiceFailed, service_env
    from .kubeconfig import write_kubeconfig
    from .supervised_cluster import SupervisedCluster
    from .supervisor import Supervisor, serve_metrics

    signal.signal(signal.SIGTERM, _raise_interrupt)  # one shutdown path for Ctrl-C and SIGTERM
    # A script's background job starts with SIGINT ignored, where Python installs no handler of
    # its own: `kill -INT` must stop it all the same.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    stack = EmbeddedStack(state, settings=settings)
    fleet: Fleet | None = None
    state_file = state / STATE_FILE

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    began = time.monotonic()
    try:
        say("berth: starting the broker and the database")
        endpoints = stack.start()
        if stack.restored is not None and (stack.restored.events or stack.restored.intents):
            say(f"berth: {stack.restored.summary()}")
        token = os.environ.get("BERTH_API_TOKEN", "").strip() or secrets.token_urlsafe(24)
        viewer = os.environ.get("BERTH_VIEWER_TOKEN", "").strip() or secrets.token_urlsafe(24)
        env = service_env(endpoints.kafka_bootstrap_servers, endpoints.database_url, settings.topic_prefix, token,
                          viewer_token=viewer)
        tls = ensure_loopback_tls(state / "tls")
        fleet = Fleet(env, state / "logs", options, gateway_tls=tls)
        say(f"berth: broker and database ready ({time.monotonic() - began:.1f} s); starting "
            f"{fleet.planned_summary()}")
        try:
            children = fleet.start_all(gateway_port=args.port, ready_timeout=args.ready_timeout)
        except ServiceFailed as e:
            raise CliError(str(e), EXIT_ERROR) from None
        gateway = next(c for c in children if c.spec.gateway)
        running = fleet

        def write_state() -> None:
            pids = stack.endpoints.pids if stack.endpoints else endpoints.pids
            _write_state(state_file, {
                "gateway_url": gateway.url, "ca_file": str(tls.ca_file), "api_token": token, "viewer_token": viewer,
                "kafka_bootstrap_servers": endpoints.kafka_bootstrap_servers, "database_url": endpoints.database_url,
                "topic_prefix": settings.topic_prefix, "state_dir": str(state),
                "services": {m.label: m.url for m in running.members.values()},
                "pids": {**pids, **{m.label: m.process.pid for m in running.members.values()}},
                "supervisor_url": supervisor_url,
            })

        say(f"berth: every service ready ({time.monotonic() - began:.1f} s)")
        supervisor = Supervisor(SupervisedCluster(stack, fleet, say=say), say=say,
                                on_restart=lambda label: write_state())
        metrics = serve_metrics(supervisor)
        supervisor_url = f"http://127.0.0.1:{metrics.server_address[1]}"
        write_state()
        kubeconfig = state / KUBECONFIG_FILE
        write_kubeconfig(kubeconfig, gateway.url, token, str(tls.ca_file))
        print(f"berth ready: {gateway.url} (state in {state_file}; Ctrl-C to stop)", flush=True)
        print(f"berth kubectl: export KUBECONFIG={kubeconfig}", flush=True)
        print(f"berth ui: {gateway.url}/ui/ (sign in with viewer_token from {state_file})", flush=True)
        try:
            return _watch(supervisor)
        finally:
            metrics.shutdown()
            metrics.server_close()
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
        if fleet is not None:
            fleet.stop_all(timeout=10, keep=(PROJECTOR,))
            _drain(fleet, stack)
            fleet.stop_all(timeout=10)
        stack.stop()
        state_file.unlink(missing_ok=True)
        (state / KUBECONFIG_FILE).unlink(missing_ok=True)
        print("berth stopped", file=sys.stderr, flush=True)


def _drain(fleet: Fleet, stack: EmbeddedStack) -> None:
    """Let the projector store what the services wrote last before the broker stops: the embedded
    broker's log goes with it, and a restart rebuilds the log from the event store alone."""
    projector = fleet.members.get(PROJECTOR)
    endpoints = stack.endpoints
    if projector is None or not projector.process.running() or endpoints is None:
        return
    from shared.adapters.log_restore import wait_stored

    try:
        left = asyncio.run(wait_stored(endpoints.settings(stack.settings), stack.registry, DRAIN_TIMEOUT_S))
    except (Exception, KeyboardInterrupt) as exc:  # a second Ctrl-C: stop now
        print(f"berth: not waiting for the projector to store the last events ({type(exc).__name__})",
              file=sys.stderr, flush=True)
        return
    if left:
        print(f"berth: {left} events were not stored in {DRAIN_TIMEOUT_S:.0f} s; the broker's log loses them",
              file=sys.stderr, flush=True)


def _write_state(path: Path, data: dict[str, Any]) -> None:
    """Readable by the owner only: it holds the API token."""
    write_atomically(path, json.dumps(data, indent=2, sort_keys=True).encode())


def _watch(supervisor: Supervisor) -> int:
    """Block until interrupted, restarting services that exit; one that keeps dying takes the
    cluster down with a non-zero code."""
    while True:
        stop = supervisor.poll()
        if stop is not None:
            print(f"error: {stop}", file=sys.stderr, flush=True)
            return EXIT_ERROR
        time.sleep(0.5)
