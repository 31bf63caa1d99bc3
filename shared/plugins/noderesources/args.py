"""NodeResourcesFitArgs / NodeResourcesBalancedAllocationArgs: defaulting (v1 defaults.go) and
validation (validation_pluginargs.go), from the camelCase args dict of a KubeSchedulerConfiguration.

Defaulting runs before validation, as upstream: a missing or zero weight becomes 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from .resource_names import is_qualified_name

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SUPPORTED_STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


class ResourceSpec(NamedTuple):
    name: str
    weight: int


class ShapePoint(NamedTuple):
    utilization: int
    score: int


DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


class FitArgs(NamedTuple):
    ignored_resources: frozenset[str]
    ignored_resource_groups: frozenset[str]
    strategy: str
    resources: tuple[ResourceSpec, ...]
    shape: tuple[ShapePoint, ...]


class ArgsError(ValueError):
    """Invalid plugin args; the message aggregates field errors as upstream's ErrorList does."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        super().__init__(self.errors[0] if len(self.errors) == 1 else "[" + ", ".join(self.errors) + "]")


def _go(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def _int(value: Any, path: str, errors: list[str]) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        errors.append(f"{path}: Invalid value: {_go(value)}: must be an integer")
        return 0
    return value


def _resources(raw: Any, path: str, errors: list[str]) -> list[ResourceSpec]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.append(f"{path}: Invalid value: must be a list")
        return []
    specs: list[ResourceSpec] = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("name", ""), str):
            errors.append(f"{path}[{i}]: Invalid value: must be an object with a name")
            continue
        weight = _int(item.get("weight", 0) or 0, f"{path}[{i}].weight", errors)
        specs.append(ResourceSpec(item.get("name", ""), weight or 1))
    return specs


def _shape(raw: Any, path: str, errors: list[str]) -> list[ShapePoint]:
    points: list[ShapePoint] = []
    for i, item in enumerate(raw or []):
        if not isinstance(item, Mapping):
            errors.append(f"{path}[{i}]: Invalid value: must be an object")
            continue
        points.append(ShapePoint(_int(item.get("utilization", 0), f"{path}[{i}].utilization", errors),
                                 _int(item.get("score", 0), f"{path}[{i}].score", errors)))
    if not points:
        errors.append(f"{path}: Required value: at least one point must be specified")
        return points
    for i in range(1, len(points)):
        if points[i - 1].utilization >= points[i].utilization:
            errors.append(f"{path}[{i}].utilization: Invalid value: {points[i].utilization}: "
                          "utilization values must be sorted in increasing order")
            break
    for i, p in enumerate(points):
        if not 0 <= p.utilization <= MAX_UTILIZATION:
            errors.append(f"{path}[{i}].utilization: Invalid value: {p.utilization}: not in valid range [0, 100]")
        if not 0 <= p.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errors.append(f"{path}[{i}].score: Invalid value: {p.score}: not in valid range [0, 10]")
    return points


def _validate_weights(resources: Sequence[ResourceSpec], path: str, errors: list[str]) -> None:
    for i, r in enumerate(resources):
        if r.weight <= 0 or r.weight > 100:
            errors.append(f"{path}[{i}].weight: Invalid value: {r.weight}: "
                          f"resource weight of {r.name} not in valid range (0, 100]")


def _names(raw: Any, path: str, errors: list[str], group: bool) -> frozenset[str]:
    out: set[str] = set()
    for i, name in enumerate(raw or []):
        if not isinstance(name, str):
            errors.append(f"{path}[{i}]: Invalid value: {_go(name)}: must be a string")
            continue
        if group and "/" in name:
            errors.append(f"{path}[{i}]: Invalid value: {_go(name)}: resource group name can't contain '/'")
        if not is_qualified_name(name):
            errors.append(f"{path}[{i}]: Invalid value: {_go(name)}: name part must consist of alphanumeric "
                          "characters, '-', '_' or '.', and must start and end with an alphanumeric character")
        out.add(name)
    return frozenset(out)


def parse_fit_args(args: Mapping[str, Any] | None) -> FitArgs:
    args = args or {}
    errors: list[str] = []
    ignored = _names(args.get("ignoredResources"), "ignoredResources", errors, group=False)
    groups = _names(args.get("ignoredResourceGroups"), "ignoredResourceGroups", errors, group=True)
    raw_strategy = args.get("scoringStrategy")
    strategy = LEAST_ALLOCATED
    resources: list[ResourceSpec] = []
    shape: list[ShapePoint] = []
    if raw_strategy is not None:
        if not isinstance(raw_strategy, Mapping):
            raise ArgsError(["scoringStrategy: Invalid value: must be an object"])
        strategy = raw_strategy.get("type", "")
        if strategy not in SUPPORTED_STRATEGIES:
            supported = ", ".join(f'"{s}"' for s in SUPPORTED_STRATEGIES)
            errors.append(f"scoringStrategy.type: Unsupported value: {_go(strategy)}: supported values: {supported}")
        resources = _resources(raw_strategy.get("resources"), "scoringStrategy.resources", errors)
        rtc = raw_strategy.get("requestedToCapacityRatio")
        if rtc is not None:
            shape = _shape(rtc.get("shape") if isinstance(rtc, Mapping) else None, "scoringStrategy.shape", errors)
        elif strategy == REQUESTED_TO_CAPACITY_RATIO:
            errors.append("scoringStrategy.requestedToCapacityRatio: Required value: "
                          "the RequestedToCapacityRatio strategy needs a shape")
    if not resources:
        resources = list(DEFAULT_RESOURCES)
    _validate_weights(resources, "scoringStrategy.resources", errors)
    if errors:
        raise ArgsError(errors)
    return FitArgs(ignored, groups, strategy, tuple(resources), tuple(shape))


def parse_balanced_allocation_args(args: Mapping[str, Any] | None) -> tuple[ResourceSpec, ...]:
    args = args or {}
    errors: list[str] = []
    resources = _resources(args.get("resources"), "resources", errors) or list(DEFAULT_RESOURCES)
    seen: set[str] = set()
    for i, r in enumerate(resources):
        if r.name in seen:
            errors.append(f"resources[{i}].name: Duplicate value: {_go(r.name)}")
        seen.add(r.name)
        if r.weight != 1:
            errors.append(f"resources[{i}].weight: Invalid value: {r.weight}: must be 1")
    if errors:
        raise ArgsError(errors)
    return tuple(resources)
