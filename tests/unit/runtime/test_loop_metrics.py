"""Loop metrics expose exactly what prometheus_client's own counters and histograms expose."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest

from services.runtime.loop_metrics import LoopCounter, LoopHistogram

BUCKETS = (0.001, 0.01, 0.1, 1.0)
OBSERVED = [0.0, 0.001, 0.0010001, 0.05, 0.1, 2.5, 1.0, 0.0005]


def _update(counter: Any, plain: Any, histogram: Any, single: Any) -> None:
    counter.labels("ok").inc()
    counter.labels("ok").inc(2)
    counter.labels("failed").inc()
    plain.inc(3)
    for i, seconds in enumerate(OBSERVED):
        histogram.labels("PreFilter", "Success" if i % 3 else "Error").observe(seconds)
        single.observe(seconds)


def test_the_same_samples_as_the_clients_own() -> None:
    disable_created_metrics()  # as every service does (services/runtime/metrics.py)
    theirs, ours = CollectorRegistry(), CollectorRegistry()
    _update(Counter("c", "a counter", ["result"], registry=theirs),
            Counter("plain", "no labels", registry=theirs),
            Histogram("h", "a histogram", ["point", "status"], buckets=BUCKETS, registry=theirs),
            Histogram("one", "no labels", buckets=BUCKETS, registry=theirs))
    _update(LoopCounter("c", "a counter", ["result"], registry=ours),
            LoopCounter("plain", "no labels", registry=ours),
            LoopHistogram("h", "a histogram", ["point", "status"], buckets=BUCKETS, registry=ours),
            LoopHistogram("one", "no labels", buckets=BUCKETS, registry=ours))
    assert generate_latest(ours).decode() == generate_latest(theirs).decode()
    assert ours.get_sample_value("h_bucket", {"point": "PreFilter", "status": "Success", "le": "0.001"}) == 2


def test_counters_refuse_to_go_down_and_labels_must_match() -> None:
    counter = LoopCounter("c", "a counter", ["result"], registry=None)
    with pytest.raises(ValueError, match="non-negative"):
        counter.labels("ok").inc(-1)
    with pytest.raises(ValueError, match="1 label values wanted, 2 given"):
        counter.labels("ok", "extra")
