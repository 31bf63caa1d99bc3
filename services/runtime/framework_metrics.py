"""kube-scheduler's framework metrics for a service's profiles: how long each extension point and
each plugin takes, as `scheduler_framework_extension_point_duration_seconds` and
`scheduler_plugin_execution_duration_seconds`.

The core stays free of metrics: `instrument` wraps the methods of a built profile (and its
plugins) in timers at the service's edge. As upstream, every run of an extension point is
observed, and plugins one run in ten (upstream samples 10% of scheduling cycles). Plugins are
timed where they run once per pod (PreFilter, PostFilter, PreScore, Reserve, Permit, PreBind,
Bind): Berth runs Filter and Score mostly as passes over every node at once (the node index),
where no plugin runs one node at a time, and a timer around each per-node call would cost more
than the call. Score's extension-point time is NormalizeScore and the weighting, where the
walk's scores are finished.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry

from shared.framework.runtime import Framework
from shared.framework.status import Code, Status

from .loop_metrics import LoopHistogram

_POINT_BUCKETS = tuple(0.0001 * 2**i for i in range(12))
_PLUGIN_BUCKETS = tuple(0.00001 * 1.5**i for i in range(20))
PLUGIN_SAMPLE_EVERY = 10
"""One plugin run in this many is timed (upstream's pluginMetricsSamplePercent is 10)."""

_CODE_NAMES = {
    Code.SUCCESS: "Success", Code.ERROR: "Error", Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable", Code.WAIT: "Wait",
    Code.SKIP: "Skip", Code.PENDING: "Pending",
}

# Framework method -> (extension point, where its Status is in what it returns).
_POINTS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "run_pre_filter_plugins": ("PreFilter", lambda r: r[1]),
    "run_post_filter_plugins": ("PostFilter", lambda r: r[1]),
    "run_pre_score_plugins": ("PreScore", lambda r: r),
    "finish_totals": ("Score", lambda r: r[1]),
    "run_reserve_plugins_reserve": ("Reserve", lambda r: r),
    "run_reserve_plugins_unreserve": ("Unreserve", lambda r: None),
    "run_permit_plugins": ("Permit", lambda r: r),
    "run_pre_bind_plugins": ("PreBind", lambda r: r),
    "run_bind_plugins": ("Bind", lambda r: r),
    "run_post_bind_plugins": ("PostBind", lambda r: None),
}
# Plugin method -> (extension point, where its Status is in what it returns).
_PLUGIN_POINTS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "pre_filter": ("PreFilter", lambda r: r[1]),
    "post_filter": ("PostFilter", lambda r: r[1]),
    "pre_score": ("PreScore", lambda r: r),
    "reserve": ("Reserve", lambda r: r),
    "permit": ("Permit", lambda r: r[0]),
    "pre_bind": ("PreBind", lambda r: r),
    "bind": ("Bind", lambda r: r),
}


def code_name(status: object) -> str:
    """Upstream's Code.String() of a returned status (None is Success)."""
    if isinstance(status, Status):
        return _CODE_NAMES.get(status.code, "Error")
    return "Success"


class FrameworkMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.extension_point = LoopHistogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"], buckets=_POINT_BUCKETS, registry=registry)
        self.plugin = LoopHistogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"], buckets=_PLUGIN_BUCKETS, registry=registry)


def instrument(profiles: Iterable[Framework], metrics: FrameworkMetrics) -> None:
    """Time every extension point of these profiles, and a sample of their plugins' runs; before
    they schedule anything (a profile's filter plans hold the plugin methods they were built with)."""
    for fwk in profiles:
        for method, (point, status_of) in _POINTS.items():
            setattr(fwk, method, _timed_point(getattr(fwk, method), metrics, point, fwk.profile_name, status_of))
        for plugin in fwk.plugins.values():
            for method, (point, status_of) in _PLUGIN_POINTS.items():
                if callable(getattr(type(plugin), method, None)) and not is_timed(getattr(plugin, method)):
                    setattr(plugin, method, _sampled(getattr(plugin, method), metrics, plugin.name, point, status_of))


def is_timed(fn: object) -> bool:
    """Whether `fn` is already one of this module's timing wrappers."""
    return getattr(fn, "_berth_timed", False)


def _timed_point(fn: Callable[..., Any], metrics: FrameworkMetrics, point: str, profile: str,
                 status_of: Callable[[Any], Any]) -> Callable[..., Any]:
    histogram = metrics.extension_point

    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        result = fn(*args, **kwargs)
        histogram.labels(point, code_name(status_of(result)), profile).observe(time.perf_counter() - started)
        return result

    timed._berth_timed = True  # type: ignore[attr-defined]  # the mark `is_timed` reads
    return timed


def _sampled(fn: Callable[..., Any], metrics: FrameworkMetrics, plugin: str, point: str,
             status_of: Callable[[Any], Any]) -> Callable[..., Any]:
    histogram = metrics.plugin
    turns = itertools.cycle(range(PLUGIN_SAMPLE_EVERY))

    @functools.wraps(fn)
    def sampled(*args: Any, **kwargs: Any) -> Any:
        if next(turns):
            return fn(*args, **kwargs)
        started = time.perf_counter()
        result = fn(*args, **kwargs)
        histogram.labels(plugin, point, code_name(status_of(result))).observe(time.perf_counter() - started)
        return result

    sampled._berth_timed = True  # type: ignore[attr-defined]  # the mark `is_timed` reads
    return sampled
