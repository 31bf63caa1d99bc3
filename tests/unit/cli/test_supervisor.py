"""berth up's supervisor: restarts with backoff, gives up on a service that keeps dying, counts."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from berth.supervisor import RestartPolicy, Supervisor


@dataclass
class FakeProcess:
    alive: bool = True
    code: int | None = None

    def running(self) -> bool:
        return self.alive

    def exit_code(self) -> int | None:
        return self.code

    def log_tail(self, lines: int = 20) -> str:
        return "last words"


@dataclass
class FakeMember:
    label: str
    process: FakeProcess = field(default_factory=FakeProcess)


class FakeFleet:
    def __init__(self, *labels: str) -> None:
        self.members = {label: FakeMember(label) for label in labels}
        self.restarted: list[str] = []

    def restart(self, label: str) -> object:
        self.restarted.append(label)
        self.members[label] = FakeMember(label)
        return self.members[label]

    def kill(self, label: str) -> None:
        self.members[label].process = FakeProcess(alive=False, code=-9)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_dead_service_is_restarted_after_its_backoff_and_counted() -> None:
    fleet, clock, said = FakeFleet("queue", "binder"), Clock(), list[str]()
    sup = Supervisor(fleet, clock=clock, say=said.append)
    fleet.kill("queue")
    assert sup.poll() is None and fleet.restarted == []  # waits out the first backoff (1 s)
    assert said == ["berth: queue exited with code -9; restarting in 1 s"]
    clock.now += 1.0
    assert sup.poll() is None and fleet.restarted == ["queue"]
    assert sup.restarts() == {"queue": 1, "binder": 0}
    metrics = sup.metrics()
    assert 'berth_service_restarts_total{service="queue"} 1' in metrics
    assert 'berth_service_up{service="queue"} 1' in metrics


def test_the_backoff_doubles_while_a_service_keeps_dying() -> None:
    policy = RestartPolicy(initial_backoff_s=1, max_backoff_s=5, window_s=60, limit=10)
    assert [policy.backoff(n) for n in (1, 2, 3, 4, 5)] == [1, 2, 4, 5, 5]


@pytest.mark.parametrize("spacing,stops", [(5.0, True), (20.0, False)], ids=["six-in-a-minute", "spread-out"])
def test_a_service_that_dies_too_often_stops_the_cluster(spacing: float, stops: bool) -> None:
    fleet, clock = FakeFleet("queue"), Clock()
    sup = Supervisor(fleet, RestartPolicy(initial_backoff_s=1, max_backoff_s=1, window_s=60, limit=5),
                     clock=clock, say=lambda line: None)
    reason = None
    for _ in range(6):
        fleet.kill("queue")
        reason = sup.poll()
        if reason is not None:
            break
        clock.now += 1.0
        assert sup.poll() is None  # restarted
        clock.now += spacing
    if stops:
        assert reason is not None and "queue exited 6 times within 60 s" in reason and "last words" in reason
        assert len(fleet.restarted) == 5
    else:
        assert reason is None and len(fleet.restarted) == 6


class BrokerFleet(FakeFleet):
    """Restarting the broker replaces every service too, as `SupervisedCluster` does."""

    def restart(self, label: str) -> object:
        if label == "tansu":
            for other in list(self.members):
                self.members[other] = FakeMember(other)
            self.restarted.append(label)
            return None
        return super().restart(label)


def test_members_replaced_by_a_broker_restart_are_not_counted_as_deaths() -> None:
    fleet, clock, said = BrokerFleet("tansu", "queue", "binder"), Clock(), list[str]()
    sup = Supervisor(fleet, clock=clock, say=said.append)
    fleet.kill("tansu")
    fleet.kill("queue")  # it noticed the broker's death first
    assert sup.poll() is None
    clock.now += 1.0
    assert sup.poll() is None and fleet.restarted == ["tansu"]
    clock.now += 60.0
    assert sup.poll() is None and fleet.restarted == ["tansu"], "the queue came back with the broker"
    assert sup.restarts() == {"tansu": 1, "queue": 0, "binder": 0}
