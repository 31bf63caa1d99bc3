"""The services `berth up` runs: one table, one line per service.

Adding a service is one `ServiceSpec` line: its module must run as `python -m <module>`, read the
shared settings from the environment and serve `/healthz` on BERTH_HTTP_PORT. `replicas` is the
number of processes (a callable for the ones a flag scales, e.g. filter workers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


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


def filter_workers_env(options: UpOptions) -> dict[str, str]:
    """Passed to every service: the queue sizes its scatter/gather by the number of filter workers."""
    return {"BERTH_FILTER_WORKERS": str(options.filter_workers)}
