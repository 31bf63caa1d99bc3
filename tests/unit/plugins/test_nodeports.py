"""NodePorts, with the conflict table of upstream's node_ports_test.go (ports written
"protocol/ip/port" as there)."""

from __future__ import annotations

from typing import Any

import pytest

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.status import Code, Status
from shared.plugins.nodeports import ERR_REASON, NodePorts, fits, host_ports
from tests.builders import MakeNode, MakePod


def _ports(*specs: str) -> list[dict[str, Any]]:
    out = []
    for spec in specs:
        protocol, ip, port = spec.split("/")
        p: dict[str, Any] = {"containerPort": int(port), "hostPort": int(port), "protocol": protocol}
        if ip:
            p["hostIP"] = ip
        out.append(p)
    return out


def pod_with(*specs: str, name: str = "p") -> MakePod:
    return MakePod().name(name).container(ports=_ports(*specs))


CASES = [
    ("nothing running", pod_with(), [], True),
    ("other port", pod_with("UDP/127.0.0.1/8080"), [pod_with("UDP/127.0.0.1/9090", name="e")], True),
    ("same udp port", pod_with("UDP/127.0.0.1/8080"), [pod_with("UDP/127.0.0.1/8080", name="e")], False),
    ("same tcp port", pod_with("TCP/127.0.0.1/8080"), [pod_with("TCP/127.0.0.1/8080", name="e")], False),
    ("different host ip", pod_with("TCP/127.0.0.1/8080"), [pod_with("TCP/127.0.0.2/8080", name="e")], True),
    ("different protocol", pod_with("UDP/127.0.0.1/8080"), [pod_with("TCP/127.0.0.1/8080", name="e")], True),
    ("second udp port conflict", pod_with("TCP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
     [pod_with("UDP/127.0.0.1/8080", name="e")], False),
    ("first tcp port conflict", pod_with("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
     [pod_with("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081", name="e")], False),
    ("first tcp port conflict due to 0.0.0.0 hostIP", pod_with("TCP/0.0.0.0/8001"),
     [pod_with("TCP/127.0.0.1/8001", name="e")], False),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", pod_with("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
     [pod_with("TCP/127.0.0.1/8001", name="e")], False),
    ("second tcp port conflict to 0.0.0.0 hostIP", pod_with("TCP/127.0.0.1/8001"),
     [pod_with("TCP/0.0.0.0/8001", name="e")], False),
    ("second different protocol", pod_with("UDP/127.0.0.1/8001"), [pod_with("TCP/0.0.0.0/8001", name="e")], True),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", pod_with("UDP/127.0.0.1/8001"),
     [pod_with("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001", name="e")], False),
    ("empty hostIP means 0.0.0.0", pod_with("TCP//8001"), [pod_with("TCP/10.0.0.1/8001", name="e")], False),
    ("SCTP conflict", pod_with("SCTP/127.0.0.1/8001"), [pod_with("SCTP/0.0.0.0/8001", name="e")], False),
    ("SCTP and TCP do not conflict", pod_with("SCTP/127.0.0.1/8001"), [pod_with("TCP/127.0.0.1/8001", name="e")], True),
]


@pytest.mark.parametrize(("pod", "existing", "want_fit"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(pod: MakePod, existing: list[MakePod], want_fit: bool) -> None:
    pl = NodePorts()
    info = pod.info()
    node = MakeNode().name("n").info(*(e.obj() for e in existing))
    state = CycleState()
    _, status = pl.pre_filter(state, info, [node])
    if not host_ports(info.pod):
        assert status == Status(Code.SKIP)
        return
    assert status is None
    got = pl.filter(state, info, node)
    assert got == (None if want_fit else Status(Code.UNSCHEDULABLE, ERR_REASON))
    assert fits(info.pod, node) is want_fit
    # The state is per pod: a cloned cycle state gives the same verdict.
    assert pl.filter(state.clone(), info, node) == got


def test_filter_without_pre_filter_is_an_error() -> None:
    status = NodePorts().filter(CycleState(), pod_with("TCP//80").info(), MakeNode().name("n").info())
    assert status is not None and status.code == Code.ERROR


def test_container_port_without_host_port_skips() -> None:
    pod = MakePod().name("p").container(ports=[{"containerPort": 80}]).info()
    assert NodePorts().pre_filter(CycleState(), pod, []) == (None, Status(Code.SKIP))


def _init(pod: MakePod, port: int, restart_policy: str | None) -> MakePod:
    c: dict[str, Any] = {"name": f"init{port}", "image": "x", "ports": _ports(f"TCP//{port}")}
    if restart_policy:
        c["restartPolicy"] = restart_policy
    pod.raw()["spec"].setdefault("initContainers", []).append(c)
    return pod


@pytest.mark.parametrize(("restart_policy", "counted"), [("Always", True), (None, False)],
                         ids=["sidecar ports count", "plain init container ports do not"])
def test_init_container_ports(restart_policy: str | None, counted: bool) -> None:
    pod = _init(pod_with("TCP//80"), 8080, restart_policy).obj()
    got = host_ports(pod)
    assert (("", "TCP", 8080) in got) is counted
    assert got[-1] == ("", "TCP", 80)


def test_events_to_register() -> None:
    got = NodePorts().events_to_register()
    assert any(events.ASSIGNED_POD_DELETE.matches(e) for e in got)
    assert any(events.NODE_ADD.matches(e) for e in got)
    assert not any(events.ASSIGNED_POD_ADD.matches(e) for e in got)
