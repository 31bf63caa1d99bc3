"""TaintToleration, ported from upstream's taint_toleration_test.go (Filter and Score tables)."""

from __future__ import annotations

from typing import Any

import pytest

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import NodeScore
from shared.framework.status import Code, Status
from shared.model import Taint, Toleration
from shared.plugins.tainttoleration import (
    TaintToleration,
    default_normalize_score,
    find_matching_untolerated_taint,
    tolerates,
)
from shared.plugins.tainttoleration.helpers import do_not_schedule
from tests.builders import MakeNode, MakePod


def _pod(*tolerations: dict[str, Any]) -> MakePod:
    p = MakePod().name("pod1")
    for t in tolerations:
        p.toleration(**t)
    return p


def _node(name: str, *taints: tuple[str, str, str]) -> MakeNode:
    n = MakeNode().name(name)
    for key, value, effect in taints:
        n.taint(key, value, effect)
    return n


def _tol(key: str = "", value: str = "", effect: str = "", operator: str = "") -> dict[str, Any]:
    return {k: v for k, v in (("key", key), ("value", value), ("effect", effect), ("operator", operator)) if v}


FILTER_CASES = [
    ("no tolerations, NoSchedule taint", _pod(), [("dedicated", "user1", "NoSchedule")],
     "node(s) had untolerated taint {dedicated: user1}"),
    ("toleration matches key, value and effect", _pod(_tol("dedicated", "user1", "NoSchedule")),
     [("dedicated", "user1", "NoSchedule")], None),
    ("toleration for another value", _pod(_tol("dedicated", "user2", "NoSchedule", "Equal")),
     [("dedicated", "user1", "NoSchedule")], "node(s) had untolerated taint {dedicated: user1}"),
    ("Exists tolerates any value", _pod(_tol("foo", effect="NoSchedule", operator="Exists")),
     [("foo", "bar", "NoSchedule")], None),
    ("all of several taints tolerated",
     _pod(_tol("dedicated", "user2", "NoSchedule", "Equal"), _tol("foo", effect="NoSchedule", operator="Exists")),
     [("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")], None),
    ("effect mismatch is not tolerated", _pod(_tol("foo", "bar", "PreferNoSchedule", "Equal")),
     [("foo", "bar", "NoSchedule")], "node(s) had untolerated taint {foo: bar}"),
    ("empty toleration effect tolerates every effect", _pod(_tol("foo", "bar", operator="Equal")),
     [("foo", "bar", "NoSchedule")], None),
    ("PreferNoSchedule taint never filters", _pod(_tol("dedicated", "user2", "NoSchedule", "Equal")),
     [("dedicated", "user1", "PreferNoSchedule")], None),
    ("no tolerations, PreferNoSchedule taint", _pod(), [("dedicated", "user1", "PreferNoSchedule")], None),
    ("NoExecute taint filters", _pod(), [("k", "v", "NoExecute")], "node(s) had untolerated taint {k: v}"),
    ("empty value is printed empty", _pod(), [("node-role.kubernetes.io/control-plane", "", "NoSchedule")],
     "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"),
    ("first untolerated taint in node order is named", _pod(_tol("a", "1", "NoSchedule")),
     [("a", "1", "NoSchedule"), ("b", "2", "NoExecute"), ("c", "3", "NoSchedule")],
     "node(s) had untolerated taint {b: 2}"),
    ("empty key with Exists tolerates everything", _pod(_tol(operator="Exists")),
     [("a", "1", "NoSchedule"), ("b", "2", "NoExecute")], None),
    ("empty key with Exists and an effect tolerates only that effect",
     _pod(_tol(effect="NoSchedule", operator="Exists")),
     [("a", "1", "NoSchedule"), ("b", "2", "NoExecute")], "node(s) had untolerated taint {b: 2}"),
    ("empty operator means Equal", _pod(_tol("a", "1")), [("a", "1", "NoSchedule")], None),
    ("Equal with an empty value matches only an empty taint value", _pod(_tol("a", operator="Equal")),
     [("a", "1", "NoSchedule")], "node(s) had untolerated taint {a: 1}"),
    ("Gt operator is not enabled", _pod(_tol("a", "0", operator="Gt")), [("a", "1", "NoSchedule")],
     "node(s) had untolerated taint {a: 1}"),
]


@pytest.mark.parametrize(("pod", "taints", "reason"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(pod: MakePod, taints: list[tuple[str, str, str]], reason: str | None) -> None:
    status = TaintToleration().filter(CycleState(), pod.info(), _node("nodeA", *taints).info())
    if reason is None:
        assert status is None
    else:
        assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


SCORE_CASES = [
    ("tolerated taint scores higher than an intolerable one",
     _pod(_tol("foo", "bar", "PreferNoSchedule", "Equal")),
     [[("foo", "bar", "PreferNoSchedule")], [("foo", "blah", "PreferNoSchedule")]], [100, 0]),
    ("the count of tolerated taints does not matter",
     _pod(_tol("cpu-type", "arm64", "PreferNoSchedule", "Equal"),
          _tol("disk-type", "ssd", "PreferNoSchedule", "Equal")),
     [[], [("cpu-type", "arm64", "PreferNoSchedule")],
      [("cpu-type", "arm64", "PreferNoSchedule"), ("disk-type", "ssd", "PreferNoSchedule")]], [100, 100, 100]),
    ("more intolerable taints, lower score", _pod(_tol("foo", "bar", "PreferNoSchedule", "Equal")),
     [[], [("cpu-type", "arm64", "PreferNoSchedule")],
      [("cpu-type", "arm64", "PreferNoSchedule"), ("disk-type", "ssd", "PreferNoSchedule")]], [100, 50, 0]),
    ("only PreferNoSchedule taints and tolerations count",
     _pod(_tol("cpu-type", "arm64", "NoSchedule", "Equal"), _tol("disk-type", "ssd", "NoSchedule", "Equal")),
     [[], [("cpu-type", "arm64", "NoSchedule")],
      [("cpu-type", "arm64", "PreferNoSchedule"), ("disk-type", "ssd", "PreferNoSchedule")]], [100, 100, 0]),
    ("no tolerations lands on the untainted node", _pod(),
     [[], [("cpu-type", "arm64", "PreferNoSchedule")]], [100, 0]),
    ("empty-effect toleration counts for scoring", _pod(_tol("foo", operator="Exists")),
     [[("foo", "x", "PreferNoSchedule")], [("bar", "x", "PreferNoSchedule")]], [100, 0]),
    ("one of three intolerable truncates", _pod(),
     [[("a", "", "PreferNoSchedule")], [("a", "", "PreferNoSchedule"), ("b", "", "PreferNoSchedule"),
                                        ("c", "", "PreferNoSchedule")], []], [67, 0, 100]),
]


@pytest.mark.parametrize(("pod", "node_taints", "expected"), [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score(pod: MakePod, node_taints: list[list[tuple[str, str, str]]], expected: list[int]) -> None:
    pl = TaintToleration()
    state = CycleState()
    info = pod.info()
    nodes = [_node(f"node{i}", *taints).info() for i, taints in enumerate(node_taints)]
    assert pl.pre_score(state, info, nodes) is None
    scores = []
    for n in nodes:
        score, status = pl.score(state, info, n)
        assert status is None
        scores.append(NodeScore(n.name, score))
    assert pl.normalize_score(state, info, scores) is None
    assert [s.score for s in scores] == expected


def test_score_without_pre_score_is_an_error() -> None:
    score, status = TaintToleration().score(CycleState(), MakePod().name("p").info(), _node("n").info())
    assert status is not None and status.code == Code.ERROR


def test_pre_score_state_survives_clone() -> None:
    pl = TaintToleration()
    state = CycleState()
    pod = _pod(_tol("a", "", "PreferNoSchedule", "Exists")).info()
    pl.pre_score(state, pod, [])
    assert pl.score(state.clone(), pod, _node("n", ("a", "x", "PreferNoSchedule")).info()) == (0, None)


TOLERATES_CASES = [
    ("exact", Toleration(key="k", operator="Equal", value="v", effect="NoSchedule"),
     Taint(key="k", value="v", effect="NoSchedule"), True),
    ("wrong key", Toleration(key="x", operator="Exists"), Taint(key="k", effect="NoSchedule"), False),
    ("wildcard key and effect", Toleration(operator="Exists"), Taint(key="k", value="v", effect="NoExecute"), True),
    ("unknown operator", Toleration(key="k", operator="Lt", value="5"), Taint(key="k", value="1", effect="NoSchedule"),
     False),
    ("effect mismatch", Toleration(key="k", operator="Exists", effect="NoExecute"), Taint(key="k", effect="NoSchedule"),
     False),
]


@pytest.mark.parametrize(("toleration", "taint", "want"), [c[1:] for c in TOLERATES_CASES],
                         ids=[c[0] for c in TOLERATES_CASES])
def test_tolerates(toleration: Toleration, taint: Taint, want: bool) -> None:
    assert tolerates(toleration, taint) is want


def test_find_matching_untolerated_taint_skips_excluded_effects() -> None:
    taints = [Taint(key="p", effect="PreferNoSchedule"), Taint(key="n", effect="NoSchedule")]
    assert find_matching_untolerated_taint(taints, [], do_not_schedule) == taints[1]
    assert find_matching_untolerated_taint(taints[:1], [], do_not_schedule) is None


NORMALIZE_CASES = [
    ("forward", False, [10, 5, 0], [100, 50, 0]),
    ("reverse", True, [10, 5, 0], [0, 50, 100]),
    ("all zero forward stays", False, [0, 0], [0, 0]),
    ("all zero reverse is max", True, [0, 0], [100, 100]),
    ("truncates", False, [3, 1, 2], [100, 33, 66]),
]


@pytest.mark.parametrize(("reverse", "raw", "want"), [c[1:] for c in NORMALIZE_CASES],
                         ids=[c[0] for c in NORMALIZE_CASES])
def test_default_normalize_score(reverse: bool, raw: list[int], want: list[int]) -> None:
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    default_normalize_score(100, reverse, scores)
    assert [s.score for s in scores] == want


def test_events_to_register() -> None:
    got = TaintToleration().events_to_register()
    assert events.ClusterEvent(events.NODE, events.ActionType.UPDATE_NODE_TAINT).matches(got[0])
    assert events.ClusterEvent(events.NODE, events.ActionType.ADD).matches(got[0])
    assert not events.ClusterEvent(events.NODE, events.ActionType.UPDATE_NODE_LABEL).matches(got[0])
    assert events.ClusterEvent(events.UNSCHEDULED_POD, events.ActionType.UPDATE_POD_TOLERATION).matches(got[1])
