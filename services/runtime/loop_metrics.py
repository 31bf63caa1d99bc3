"""Counters and histograms observed on one thread: the metrics a service updates for every pod.

prometheus_client guards each increment with a lock, and a histogram's observation takes two and
searches its buckets one by one: about a microsecond and a half, several times a pod in the queue
(attempts, the extension points' timers), about a tenth of its CPU. A service observes these
from one thread at a time (its event loop, or the one worker thread it awaits) and serves them on
its loop (`/metrics` is an aiohttp handler), so plain numbers do: no update is lost, and a read
racing an observation sees it whole or not at all but for its sum. They expose the same families,
samples and labels as the client's own, through its collector protocol (no `_created` samples:
the services turn those off, `services/runtime/metrics.py`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

Child = TypeVar("Child")


class _CounterChild:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError("counters can only be incremented by non-negative amounts")
        self.value += amount


class _HistogramChild:
    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: list[float]) -> None:
        self.bounds = bounds
        self.counts = [0] * len(bounds)
        """Per bucket, the observations it is the first to hold (made cumulative when collected)."""
        self.sum = 0.0

    def observe(self, amount: float) -> None:
        self.counts[bisect_left(self.bounds, amount)] += 1  # the first bound >= amount: `le`
        self.sum += amount


class _Family(Generic[Child]):
    """A family's children by label values, made on first use: `labels()` is a dictionary lookup,
    cheap enough to call for every observation (no cache of children is needed above it)."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str],
                 registry: CollectorRegistry | None) -> None:
        self.name, self.documentation, self.labelnames = name, documentation, tuple(labelnames)
        self._children: dict[tuple[str, ...], Child] = {}
        if not self.labelnames:
            self._children[()] = self._new_child()
        if registry is not None:
            registry.register(self)

    def _new_child(self) -> Child:
        raise NotImplementedError

    def labels(self, *values: str) -> Child:
        child = self._children.get(values)
        if child is None:
            if len(values) != len(self.labelnames):
                raise ValueError(f"{self.name}: {len(self.labelnames)} label values wanted, {len(values)} given")
            child = self._children[values] = self._new_child()
        return child

    def describe(self) -> Iterator[Metric]:
        yield from self.collect()

    def collect(self) -> Iterator[Metric]:
        raise NotImplementedError


class LoopCounter(_Family[_CounterChild]):
    """A counter family (`name` without `_total`, as the client's `Counter`)."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = (), *,
                 registry: CollectorRegistry | None) -> None:
        super().__init__(name, documentation, labelnames, registry)

    def _new_child(self) -> _CounterChild:
        return _CounterChild()

    def inc(self, amount: float = 1.0) -> None:
        self._children[()].inc(amount)

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for key, child in list(self._children.items()):
            family.add_metric(key, child.value)
        yield family


class LoopHistogram(_Family[_HistogramChild]):
    """A histogram family with the client's `Histogram` samples (`_bucket`, `_count`, `_sum`);
    `buckets` without +Inf, which is added."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = (), *,
                 buckets: Sequence[float], registry: CollectorRegistry | None) -> None:
        self._bounds = sorted(float(b) for b in buckets if b != float("inf")) + [float("inf")]
        super().__init__(name, documentation, labelnames, registry)

    def _new_child(self) -> _HistogramChild:
        return _HistogramChild(self._bounds)

    def observe(self, amount: float) -> None:
        self._children[()].observe(amount)

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for key, child in list(self._children.items()):
            cumulative, buckets = 0, []
            for bound, count in zip(self._bounds, child.counts):
                cumulative += count
                buckets.append((floatToGoString(bound), float(cumulative)))
            family.add_metric(list(key), buckets, child.sum)
        yield family
