"""The service processes of one cluster: started from `berth.services.SERVICES`, each in its own
process group, each serving /healthz on its own port; any of them can be added, stopped or killed
while the others run (`berth up`, the cluster benchmark and the scale-out and crash tests).
"""

from __future__ import annotations

import os
import signal
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from berth.stack.certificates import TlsFiles
from berth.stack.processes import ManagedProcess

from .services import SERVICES, ServiceSpec, UpOptions

REPO_ROOT = Path(__file__).resolve().parents[1]


def _read_port(path: Path) -> int:
    """The port a service wrote once listening, or 0 while it has not yet."""
    try:
        return int(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


class ServiceFailed(RuntimeError):
    """A service exited or did not become healthy in time; the message carries its log's tail."""


@dataclass
class Member:
    spec: ServiceSpec
    index: int
    port: int
    process: ManagedProcess
    tls: ssl.SSLContext | None = None
    """How to reach a member serving HTTPS (the gateway given a certificate); None: plain HTTP."""

    @property
    def label(self) -> str:
        return label_of(self.spec, self.index)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"


def label_of(spec: ServiceSpec, index: int) -> str:
    return spec.name if index == 0 else f"{spec.name}-{index}"


def planned(options: UpOptions) -> list[tuple[ServiceSpec, int]]:
    """Every process `Fleet.start_all` starts with `options`, in start order: its service and index."""
    return [(spec, i) for spec in SERVICES for i in range(spec.replicas(options))]


def planned_labels(options: UpOptions) -> list[str]:
    """The label of every process `Fleet.start_all` starts with `options`, in start order."""
    return [label_of(spec, i) for spec, i in planned(options)]


def service_env(bootstrap: str, database_url: str, prefix: str, token: str,
                base: Mapping[str, str] | None = None, *, viewer_token: str = "") -> dict[str, str]:
    """What every service process gets: the endpoints, the topic prefix, the gateway's tokens."""
    base = os.environ if base is None else base
    path = base.get("PYTHONPATH", "")
    env = {
        **base,
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "DATABASE_URL": database_url, "BERTH_TOPIC_PREFIX": prefix,
        "BERTH_API_TOKEN": token, "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{path}" if path else str(REPO_ROOT),
    }
    if viewer_token:
        env["BERTH_VIEWER_TOKEN"] = viewer_token
    return env


class Fleet:
    def __init__(self, env: Mapping[str, str], logs: Path, options: UpOptions | None = None, *,
                 gateway_tls: TlsFiles | None = None) -> None:
        self.env = dict(env)
        self.gateway_tls = gateway_tls
        """The gateway's certificate and key, and the authority its health checks trust; None: HTTP."""
        self.logs = logs
        self.options = options or UpOptions()
        self.members: dict[str, Member] = {}
        self.ready_timeout = 60.0
        """How long a service may take to become healthy (start_all's, used again by restart)."""
        logs.mkdir(parents=True, exist_ok=True)

    def planned_summary(self) -> str:
        """What `start_all` starts, as one phrase: "7 processes: projector, gateway, ..., filter ×2, ..."."""
        processes = planned(self.options)
        counts = Counter(spec.name for spec, _ in processes)  # in start order
        parts = [name if n == 1 else f"{name} ×{n}" for name, n in counts.items()]
        return f"{len(processes)} processes: {', '.join(parts)}"

    def start_all(self, *, gateway_port: int = 0, ready_timeout: float = 60.0) -> list[Member]:
        """Every service at its replica count, then wait until each is healthy."""
        self.ready_timeout = ready_timeout
        started = [
            self.start(spec.name, index=i, port=gateway_port if spec.gateway else 0, wait=False)
            for spec, i in planned(self.options)
        ]
        for member in started:
            self.wait_healthy(member, ready_timeout)
        return started

    def start(self, name: str, *, index: int | None = None, port: int = 0, wait: bool = True,
              ready_timeout: float = 60.0) -> Member:
        """One replica of service `name` (the lowest free index unless given)."""
        spec = next((s for s in SERVICES if s.name == name), None)
        if spec is None:
            raise ValueError(f"no service named {name!r}")
        if index is None:
            index = next(i for i in range(len(self.members) + 1) if label_of(spec, i) not in self.members)
        label = label_of(spec, index)
        old = self.members.get(label)
        if old is not None and old.process.running():
            raise ValueError(f"{label} is already running")
        # Without a fixed port the service binds any free one and writes it to its port file: a port
        # picked here could be taken by another process before the service binds it, and a health
        # check would then reach that process instead.
        port_file = self._port_file(label)
        port_file.unlink(missing_ok=True)
        env = {**self.env, **spec.env(self.options), **({spec.index_env: str(index)} if spec.index_env else {}),
               "BERTH_SERVICE": label, "BERTH_HTTP_HOST": "127.0.0.1", "BERTH_HTTP_PORT": str(port),
               "BERTH_PORT_FILE": str(port_file), "BERTH_MEMBER_FILE": str(self.logs / f"{label}.member")}
        tls = None
        if spec.gateway and self.gateway_tls is not None:
            env |= {"BERTH_TLS_CERT_FILE": str(self.gateway_tls.cert_file),
                    "BERTH_TLS_KEY_FILE": str(self.gateway_tls.key_file)}
            tls = ssl.create_default_context(cafile=str(self.gateway_tls.ca_file))
        # SIGTERM on parent death: a SIGKILLed parent still lets each service stop cleanly.
        process = ManagedProcess(label, [sys.executable, "-m", spec.module], log_path=self.logs / f"{label}.log",
                                 stop_signal=signal.SIGTERM, death_signal=signal.SIGTERM, env=env, cwd=REPO_ROOT)
        process.start()
        member = self.members[label] = Member(spec, index, port, process, tls)
        if wait:
            self.wait_healthy(member, ready_timeout)
        return member

    def stop(self, label: str, timeout: float = 10.0) -> None:
        """SIGTERM: the service finishes its batch, commits and leaves its consumer group."""
        self.members.pop(label).process.stop(timeout)

    def kill(self, label: str) -> None:
        """SIGKILL, mid-whatever it was doing; the member stays listed so `start` can bring it back."""
        self.members[label].process.kill()

    def restart(self, label: str) -> Member:
        """The member again, under its label, given start_all's ready timeout; the gateway keeps
        its port (clients hold its URL)."""
        member = self.members[label]
        port = member.port if member.spec.gateway else 0
        return self.start(member.spec.name, index=member.index, port=port, ready_timeout=self.ready_timeout)

    def stop_all(self, timeout: float = 10.0, *, keep: Collection[str] = ()) -> None:
        """Newest first: the queue goes before the services it feeds. `keep`: services (by name)
        left running."""
        for label in reversed(list(self.members)):
            if self.members[label].spec.name not in keep:
                self.members.pop(label).process.stop(timeout)

    def kill_all(self) -> None:
        """SIGKILL every member at once and forget them (their broker is gone: nothing to finish)."""
        members = list(self.members.values())
        self.members.clear()
        for member in members:
            member.process.kill()  # waits until its process group is gone

    def first_dead(self) -> Member | None:
        return next((m for m in self.members.values() if not m.process.running()), None)

    def dead_report(self) -> str | None:
        """None while every member runs; else the first dead one's exit code and log tail."""
        member = self.first_dead()
        if member is None:
            return None
        return (f"{member.label} exited with code {member.process.exit_code()}:\n"
                f"{member.process.log_tail(40)}")

    def _port_file(self, label: str) -> Path:
        return self.logs / f"{label}.port"

    def wait_healthy(self, member: Member, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        port_file = self._port_file(member.label)
        while time.monotonic() < deadline:
            if not member.process.running():
                raise ServiceFailed(f"{member.label} exited with code {member.process.exit_code()}:\n"
                                    f"{member.process.log_tail()}")
            if not member.port:
                member.port = _read_port(port_file)
                if not member.port:
                    time.sleep(0.1)
                    continue
            try:
                with urllib.request.urlopen(member.url + "/healthz", timeout=1, context=member.tls) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        raise ServiceFailed(f"{member.label} was not healthy after {timeout:.0f}s:\n{member.process.log_tail()}")
