"""PrioritySort and MoreImportantPod, as upstream's priority_sort_test.go and util tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from shared.framework.pod_info import PodInfo
from shared.plugins.queuesort import PrioritySort, more_important_pod
from tests.builders import MakePod


@dataclass
class Queued:
    pod_info: PodInfo
    timestamp: float


def queued(priority: int | None, timestamp: float, name: str = "p") -> Queued:
    pod = MakePod().name(name)
    if priority is not None:
        pod.priority(priority)
    return Queued(pod.info(), timestamp)


LESS_CASES = [
    ("p1.priority less than p2.priority", queued(100, 1.0), queued(200, 1.0), False),
    ("p1.priority greater than p2.priority", queued(200, 1.0), queued(100, 1.0), True),
    ("equal priority, p1 added to the queue earlier", queued(100, 1.0), queued(100, 2.0), True),
    ("equal priority, p2 added to the queue earlier", queued(100, 2.0), queued(100, 1.0), False),
    ("equal priority and timestamp", queued(100, 1.0), queued(100, 1.0), False),
    ("no priority counts as zero", queued(None, 2.0), queued(0, 1.0), False),
    ("negative priority after zero", queued(-1, 0.0), queued(None, 5.0), False),
]


@pytest.mark.parametrize(("a", "b", "want"), [c[1:] for c in LESS_CASES], ids=[c[0] for c in LESS_CASES])
def test_less(a: Queued, b: Queued, want: bool) -> None:
    assert PrioritySort().less(a, b) is want


@pytest.mark.parametrize(("a", "b", "want"), [c[1:] for c in LESS_CASES], ids=[c[0] for c in LESS_CASES])
def test_rank_orders_as_less(a: Queued, b: Queued, want: bool) -> None:
    rank = PrioritySort().rank_of()
    assert rank is not None
    assert (rank(a) < rank(b)) is want
    assert (rank(b) < rank(a)) is PrioritySort().less(b, a)


def pod(priority: int, start: str | None = None) -> PodInfo:
    p = MakePod().name("p").priority(priority)
    if start:
        p.start_time(start)
    return p.info()


IMPORTANCE_CASES = [
    ("higher priority wins", pod(2), pod(1), True),
    ("lower priority loses", pod(1, "2020-01-01T00:00:00Z"), pod(2), False),
    ("earlier start wins", pod(1, "2020-01-01T00:00:00Z"), pod(1, "2020-01-01T00:00:01Z"), True),
    ("later start loses", pod(1, "2020-01-01T00:00:01Z"), pod(1, "2020-01-01T00:00:00Z"), False),
    ("started beats not started", pod(1, "2030-01-01T00:00:00Z"), pod(1), True),
    ("not started loses to started", pod(1), pod(1, "2020-01-01T00:00:00Z"), False),
    ("offset times compare as instants", pod(1, "2020-01-01T01:00:00+02:00"), pod(1, "2020-01-01T00:00:00Z"), True),
]


@pytest.mark.parametrize(("a", "b", "want"), [c[1:] for c in IMPORTANCE_CASES], ids=[c[0] for c in IMPORTANCE_CASES])
def test_more_important_pod(a: PodInfo, b: PodInfo, want: bool) -> None:
    assert more_important_pod(a, b) is want


def test_a_sort_that_orders_its_own_way_has_no_rank_unless_it_gives_one() -> None:
    class Reversed(PrioritySort):
        def less(self, a: Any, b: Any) -> bool:
            return super().less(b, a)

    assert Reversed().rank_of() is None
