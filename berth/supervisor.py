"""Keeps `berth up`'s services running, as compose's `restart: unless-stopped` keeps containers.

A service that exits is started again after a backoff (1 s, doubling up to 30 s while it keeps
dying); one that died `RestartPolicy.limit` times within `RestartPolicy.window_s` is given up on,
and `berth up` stops with its log's tail. Each service is stateless apart from the log and the
database (it rebuilds its view from the log and resumes its consumer group's offsets), so a
restart loses nothing. Restarts are counted for `/metrics` (`berth_service_restarts_total`).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol


@dataclass(frozen=True)
class RestartPolicy:
    initial_backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    window_s: float = 60.0
    limit: int = 5
    """Deaths within `window_s` that are tolerated; one more and the cluster stops."""

    def backoff(self, recent_deaths: int) -> float:
        return min(self.max_backoff_s, self.initial_backoff_s * 2 ** max(0, recent_deaths - 1))


class Process(Protocol):
    def running(self) -> bool: ...

    def exit_code(self) -> int | None: ...

    def log_tail(self, lines: int = ...) -> str: ...


class Member(Protocol):
    @property
    def label(self) -> str: ...
    @property
    def process(self) -> Process: ...


class Fleet(Protocol):
    # Read-only, so that a fleet may hold its own kinds of member (the supervisor only reads them).
    @property
    def members(self) -> Mapping[str, Member]: ...

    def restart(self, label: str) -> object: ...


@dataclass
class _Record:
    deaths: deque[float] = field(default_factory=deque)
    restarts: int = 0
    due: float | None = None


class Supervisor:
    def __init__(self, fleet: Fleet, policy: RestartPolicy | None = None, *,
                 clock: Callable[[], float] = time.monotonic, say: Callable[[str], None] = print,
                 on_restart: Callable[[str], None] | None = None) -> None:
        self.fleet, self.policy, self.clock, self.say = fleet, policy or RestartPolicy(), clock, say
        self.on_restart = on_restart
        self._records: dict[str, _Record] = {}
        self._lock = threading.Lock()

    def poll(self) -> str | None:
        """One step: note services that exited, restart those whose backoff is over. Returns why
        the cluster must stop (a service that keeps dying), else None."""
        now = self.clock()
        for label in list(self.fleet.members):
            # Looked up again each time: restarting one member (the broker) can replace others.
            member = self.fleet.members.get(label)
            if member is None:
                continue
            record = self._records.get(label)
            if record is None:
                with self._lock:  # the metrics thread reads the records
                    record = self._records[label] = _Record()
            if member.process.running():
                record.due = None  # brought back meanwhile (with the broker, say)
                continue
            if record.due is None:
                record.deaths.append(now)
                while record.deaths and record.deaths[0] < now - self.policy.window_s:
                    record.deaths.popleft()
                code = member.process.exit_code()
                if len(record.deaths) > self.policy.limit:
                    return (f"{label} exited {len(record.deaths)} times within {self.policy.window_s:.0f} s "
                            f"(last code {code}); stopping\n{member.process.log_tail()}")
                delay = self.policy.backoff(len(record.deaths))
                record.due = now + delay
                self.say(f"berth: {label} exited with code {code}; restarting in {delay:.0f} s")
            if now >= record.due:
                record.due = None
                try:
                    self.fleet.restart(label)
                except Exception as exc:  # noqa: BLE001 (it exited again, or never became healthy)
                    self.say(f"berth: {label} did not come back: {str(exc).splitlines()[0]}")
                    continue  # an exit is noted on the next poll; one still starting is left to run
                record.restarts += 1
                if self.on_restart is not None:
                    self.on_restart(label)
        return None

    def restarts(self) -> dict[str, int]:
        with self._lock:
            return {label: r.restarts for label, r in self._records.items()}

    def metrics(self) -> str:
        """Prometheus' text format: restarts per service, and whether each runs now."""
        lines = ["# HELP berth_service_restarts_total Times berth up restarted a service that exited.",
                 "# TYPE berth_service_restarts_total counter"]
        lines += [f'berth_service_restarts_total{{service="{label}"}} {n}'
                  for label, n in sorted(self.restarts().items())]
        lines += ["# HELP berth_service_up Whether the service's process runs.", "# TYPE berth_service_up gauge"]
        lines += [f'berth_service_up{{service="{label}"}} {int(m.process.running())}'
                  for label, m in sorted(self.fleet.members.items())]
        return "\n".join(lines) + "\n"


def serve_metrics(supervisor: Supervisor, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """`/metrics` on a thread of its own; the server's port is `server.server_address[1]`."""

    class _Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server name)
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = supervisor.metrics().encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # quiet: berth up's output is for people
            pass

    server = ThreadingHTTPServer((host, port), _Handler)
    threading.Thread(target=server.serve_forever, name="berth-up-metrics", daemon=True).start()
    return server
