"""The services `berth up` runs: one table, one line per service.

Adding a service is one `ServiceSpec` line: its module must run as `python -m <module>`, read the
shared settings from the environment and serve `/healthz` on BERTH_HTTP_PORT. `replicas` is the
number of processes (a callable for the ones a flag scales, e.g. filter workers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from shared.events import NODE_SHARDS

from .client import CliError


@dataclass(frozen=True)
class UpOptions:
    filter_workers: int = 1


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    module: str
    replicas: Callable[[UpOptions], int] = field(default=lambda o: 1)
    env: Callable[[UpOptions], dict[str, str]] = field(default=lambda o: {})
    gateway: bool = False
    """The API endpoint `berth.json` points at (one replica)."""


SERVICES: tuple[ServiceSpec, ...] = (
    ServiceSpec("projector", "services.projector"),
    ServiceSpec("gateway", "services.gateway", gateway=True),
    ServiceSpec("binder", "services.binder"),
    ServiceSpec("filter", "services.filter", replicas=lambda o: o.filter_workers),
    ServiceSpec("preemption", "services.preemption"),
    ServiceSpec("queue", "services.queue"),
)


def filter_workers_problem(count: int) -> str:
    """Why `count` filter replicas cannot run ("" when they can): they share the partitions of
    filter-requests, and more than there are would sit idle."""
    if 1 <= count <= NODE_SHARDS:
        return ""
    return f"filter workers must be between 1 and {NODE_SHARDS} (the partitions of filter-requests), got {count}"


def check_filter_workers(count: int) -> None:
    problem = filter_workers_problem(count)
    if problem:
        raise CliError(f"--filter-workers: {problem}", 2)
