"""`berth demo` shows each pod's outcome and the pods that leave (a preemption's victims), and stops
watching once nothing changes, also when a victim was evicted before it was ever listed."""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

import pytest

from berth.client import CliError, Gateway
from berth.demo_cmd import _wait_ready, watch_pods


class Pods:
    """A gateway whose pod list follows a script, one list per poll (the last one repeats), and
    whose event log holds the evictions of `evicted` (namespace/name)."""

    def __init__(self, *polls: list[dict[str, Any]], evicted: tuple[str, ...] = ()) -> None:
        self.polls = list(polls)
        self.asked = 0
        self.evicted = set(evicted)
        self.logs_read: list[str] = []

    def get(self, path: str) -> dict[str, Any]:
        if path.startswith("/apis/berth.dev/v1/events?"):
            query = parse_qs(urlsplit(path).query)
            assert set(query["type"][0].split(",")) == {"PodSubmitted", "PodEvicted", "PodDeleted"}
            key = query["pod"][0]
            self.logs_read.append(key)
            # The log names the pod with the victims it evicted as a preemptor, as the gateway's does.
            submitted = {"type": "PodSubmitted", "payload": {"pod": {"metadata": {"uid": f"uid-{key}"}}}}
            caused = {"type": "PodEvicted", "payload": {"uid": "uid-someone", "preemptor_uid": f"uid-{key}"}}
            own = {"type": "PodEvicted", "payload": {"uid": f"uid-{key}", "preemptor_uid": "uid-big"}}
            events = [submitted, caused, *([own] if key in self.evicted else [])]
            return {"items": [{"event": e} for e in events]}
        assert path == "/api/v1/pods"
        self.asked += 1
        return {"items": self.polls.pop(0) if len(self.polls) > 1 else self.polls[0]}


def _as_gateway(pods: Pods) -> Gateway:
    return cast(Gateway, pods)  # a stand-in: watch_pods calls only its get()


def pod(name: str, node: str = "", message: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"nodeName": node} if node else {},
            "status": {"message": message} if message else {}}


def test_a_victim_that_leaves_is_shown_and_not_waited_for(capsys: pytest.CaptureFixture[str]) -> None:
    gateway = Pods([pod("victim", "n1"), pod("big", message="0/1 nodes are available: 1 Insufficient cpu.")],
                   [pod("big", "n1")])
    pods = watch_pods(_as_gateway(gateway), {"default/victim", "default/big"},
                  timeout=30, poll_s=0.01, quiet_s=0.05, unseen_s=5)
    out = capsys.readouterr().out
    assert [p["metadata"]["name"] for p in pods] == ["big"]
    assert "removed   default/victim (evicted or deleted)" in out and "bound     default/big -> n1" in out
    assert gateway.logs_read == ["default/victim"]  # asked how it left; this log does not say
    assert gateway.asked < 100  # settled on quiet, long before the timeout


def test_a_victim_that_leaves_is_named_as_the_log_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    gateway = Pods([pod("victim", "n1"), pod("big")], [pod("big", "n1")], evicted=("default/victim",))
    watch_pods(_as_gateway(gateway), {"default/victim", "default/big"},
               timeout=30, poll_s=0.01, quiet_s=0.05, unseen_s=5)
    assert "removed   default/victim (evicted)" in capsys.readouterr().out


def test_a_pod_never_listed_is_waited_for_only_a_while(capsys: pytest.CaptureFixture[str]) -> None:
    gateway = Pods([pod("big", "n1")])
    pods = watch_pods(_as_gateway(gateway), {"default/victim", "default/big"},
                  timeout=30, poll_s=0.01, quiet_s=0.02, unseen_s=0.2)
    assert [p["metadata"]["name"] for p in pods] == ["big"]
    assert gateway.asked < 100
    assert "removed   default/victim (evicted or deleted)" in capsys.readouterr().out


def test_a_pod_never_listed_whose_eviction_is_logged_is_not_waited_for(capsys: pytest.CaptureFixture[str]) -> None:
    gateway = Pods([pod("big", "n1")], evicted=("default/victim",))
    pods = watch_pods(_as_gateway(gateway), {"default/victim", "default/big"},
                      timeout=30, poll_s=0.01, quiet_s=0.02, unseen_s=30)
    assert [p["metadata"]["name"] for p in pods] == ["big"]
    assert gateway.asked < 100 and gateway.logs_read == ["default/victim"]
    assert "removed   default/victim (evicted)" in capsys.readouterr().out


def test_a_pod_without_an_outcome_is_waited_for_until_the_timeout() -> None:
    gateway = Pods([pod("big")])
    watch_pods(_as_gateway(gateway), {"default/big"}, timeout=0.3, poll_s=0.01, quiet_s=0.02, unseen_s=0.05)
    assert gateway.asked >= 10


class _Up:
    """`berth up` as the demo reads it: its merged output, then its exit code."""

    def __init__(self, *lines: str, code: int = 0) -> None:
        self.stdout = iter(f"{line}\n" for line in lines)
        self.code = code

    def wait(self) -> int:
        return self.code


def test_the_demo_shows_berth_up_starting_and_why_it_failed(capsys: pytest.CaptureFixture[str]) -> None:
    _wait_ready(cast(Any, _Up("berth: starting the broker and the database", "berth ready: https://x", "later")))
    assert capsys.readouterr().out.splitlines() == ["berth: starting the broker and the database",
                                                     "berth ready: https://x"]
    with pytest.raises(CliError, match=r"berth up exited \(1\)"):
        _wait_ready(cast(Any, _Up("berth: starting the broker and the database", "error: queue failed: boom",
                                  code=1)))
    assert "error: queue failed: boom" in capsys.readouterr().out
