"""Pod-level resources (`spec.resources`, PodLevelResources, on by default since v1.34) as the API
server validates and defaults them, before the scheduler reads them.

- Only cpu, memory and hugepages-* may be set for the pod as a whole.
- Pod-level limits without requests: each such request is defaulted, for cpu and memory, to the
  containers' aggregate request where a container requests the resource, else to the limit.
- Pod-level requests are at most their limits and at least the containers' aggregate requests.

The containers' aggregate is the scheduler's: regular containers and sidecars (restartable init
containers) summed, against each init container with the sidecars started before it (the max).
"""

from __future__ import annotations

from fractions import Fraction

import msgspec

from shared.errors import InvalidInput

from . import quantity
from .pod import Container, Pod, Quantity

HUGEPAGES_PREFIX = "hugepages-"
DEFAULTED_FROM_CONTAINERS = ("cpu", "memory")
"""The pod-level requests the API server defaults (overcommittable: hugepages are not)."""


def is_pod_level_resource(name: str) -> bool:
    """Resources a pod may request as a whole (`spec.resources`): cpu, memory and hugepages."""
    return name in ("cpu", "memory") or name.startswith(HUGEPAGES_PREFIX)


def container_requests(c: Container) -> dict[str, Quantity]:
    """A container's requests as the API server defaults them: a limit without a request is one."""
    return {**c.resources.limits, **c.resources.requests}


def _requests(c: Container) -> dict[str, Fraction]:
    return {name: quantity.parse_quantity(q) for name, q in container_requests(c).items()}


def aggregate_container_requests(pod: Pod) -> dict[str, Fraction]:
    total: dict[str, Fraction] = {}
    for c in pod.spec.containers:
        for name, q in _requests(c).items():
            total[name] = total.get(name, Fraction(0)) + q
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for c in pod.spec.init_containers:
        own = _requests(c)
        if c.restart_policy == "Always":
            for name, q in own.items():
                total[name] = total.get(name, Fraction(0)) + q
                sidecars[name] = sidecars.get(name, Fraction(0)) + q
            use = dict(sidecars)
        else:
            use = {name: own.get(name, Fraction(0)) + sidecars.get(name, Fraction(0))
                   for name in own.keys() | sidecars.keys()}
        for name, q in use.items():
            init_max[name] = max(init_max.get(name, Fraction(0)), q)
    return {name: max(total.get(name, Fraction(0)), init_max.get(name, Fraction(0)))
            for name in total.keys() | init_max.keys()}


def check_and_default(what: str, pod: Pod) -> Pod:
    """The pod with its pod-level requests defaulted; InvalidInput where the API server refuses them."""
    resources = pod.spec.resources
    if resources is None:
        return pod
    for part, values in (("requests", resources.requests), ("limits", resources.limits)):
        for name in values:
            if not is_pod_level_resource(name):
                raise InvalidInput(what, f"spec.resources.{part}[{name}]",
                                   f'Unsupported value: "{name}": supported values: "cpu", "memory", "hugepages-*"')
    aggregate = aggregate_container_requests(pod)
    requests: dict[str, Quantity] = dict(resources.requests)
    if resources.limits:
        for name in DEFAULTED_FROM_CONTAINERS:
            if name in requests:
                continue
            if name in aggregate:
                requests[name] = _written(name, aggregate[name])
            elif name in resources.limits:
                requests[name] = resources.limits[name]
    for name, q in requests.items():
        value = quantity.parse_quantity(q)
        if name in resources.limits and value > quantity.parse_quantity(resources.limits[name]):
            raise InvalidInput(what, f"spec.resources.requests[{name}]",
                               f"Invalid value: {q!r}: must be less than or equal to {name} limit of "
                               f"{resources.limits[name]}")
        if value < aggregate.get(name, Fraction(0)):
            raise InvalidInput(what, f"spec.resources.requests[{name}]",
                               f"Invalid value: {q!r}: must be greater than or equal to aggregate container "
                               f"requests of {_plain(aggregate[name])}")
    if requests == resources.requests:
        return pod
    defaulted = msgspec.structs.replace(resources, requests=requests)
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, resources=defaulted))


def _plain(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{quantity.milli_value(float(value))}m"


def _written(name: str, value: Fraction) -> Quantity:
    """An aggregate as a quantity: cpu in millicores, the rest in whole units."""
    if name == "cpu":
        return quantity.format_milli_cpu(-(-value * 1000 // 1))
    return str(-(-value // 1))
