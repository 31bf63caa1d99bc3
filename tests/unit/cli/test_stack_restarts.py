"""A broker or database the supervisor restarts but that does not become ready is stopped again, so
the supervisor sees it dead and tries again on its next round; left running, it would pass for a
live one (and the services the broker's restart stopped would never be started)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from berth.stack import embedded
from berth.stack.embedded import EmbeddedStack, Endpoints
from berth.supervised_cluster import BROKER, SupervisedCluster
from shared.adapters.log_restore import RestoreReport
from shared.errors import EmbeddedStackError


class _Component:
    """A broker or database server that starts but never answers."""

    made: list[_Component] = []

    def __init__(self, *args: object, port: int | None = None, **kwargs: object) -> None:
        self.port = port or 1
        self.running = False
        _Component.made.append(self)

    def start(self) -> None:
        self.running = True

    def stop(self) -> None:
        self.running = False

    async def wait_ready(self, timeout: float) -> None:
        raise EmbeddedStackError("not ready in time")


@pytest.mark.parametrize("which", ["broker", "postgres"])
def test_a_component_that_does_not_come_back_is_stopped_for_the_next_try(
        which: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "TansuBroker", _Component)
    monkeypatch.setattr(embedded, "PostgresServer", _Component)
    _Component.made = []
    stack = EmbeddedStack(tmp_path)
    stack.broker, stack.postgres = _Component(port=9092), _Component(port=5432)  # type: ignore[assignment]  # stand-ins
    stack.endpoints = Endpoints("127.0.0.1:9092", "postgresql://x@127.0.0.1:5432/berth", "", str(tmp_path))
    with pytest.raises(EmbeddedStackError, match="not ready in time"):
        stack.restart_broker() if which == "broker" else stack.restart_postgres()
    again = _Component.made[-1]
    assert again is (stack.broker if which == "broker" else stack.postgres)
    assert not again.running


class _Stack:
    """A stack whose first broker restart fails."""

    broker = postgres = None

    def __init__(self) -> None:
        self.tries = 0

    def restart_broker(self) -> RestoreReport:
        self.tries += 1
        if self.tries == 1:
            raise EmbeddedStackError("the database was away")
        return RestoreReport()


@dataclass
class _Spec:
    gateway: bool


@dataclass
class _Member:
    spec: _Spec
    port: int


class _Fleet:
    ready_timeout = 1.0

    def __init__(self) -> None:
        self.members: dict[str, _Member] = {"gateway": _Member(_Spec(True), 8443), "queue": _Member(_Spec(False), 9)}
        self.started_on: list[int] = []

    def kill_all(self) -> None:
        self.members.clear()

    def start_all(self, *, gateway_port: int, ready_timeout: float) -> list[_Member]:
        self.started_on.append(gateway_port)
        return []


def test_a_broker_brought_back_after_a_failed_try_brings_the_gateway_back_on_its_port() -> None:
    # The failed try stopped the services already: the gateway is no longer a member to ask.
    fleet = _Fleet()
    cluster = SupervisedCluster(_Stack(), fleet, say=lambda line: None)  # type: ignore[arg-type]  # stand-ins
    with pytest.raises(EmbeddedStackError):
        cluster.restart(BROKER)
    cluster.restart(BROKER)
    assert fleet.started_on == [8443]
