"""NodeAffinity, ported from upstream's node_affinity_test.go (Filter/PreFilter and priority
tables) plus the requirement parsing rules of component-helpers' nodeaffinity."""

from __future__ import annotations

from typing import Any

import pytest

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import NodeScore
from shared.framework.status import Code, Status
from shared.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
    parse_int64,
)
from tests.builders import MakeNode, MakePod

NAME = "metadata.name"


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def term(*exprs: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields:
        t["matchFields"] = fields
    return t


def required(*terms: dict[str, Any]) -> MakePod:
    return MakePod().name("p").node_affinity_required(list(terms))


def selector(labels: dict[str, str]) -> MakePod:
    return MakePod().name("p").node_selector(labels)


UNRESOLVABLE_POD = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)

# (id, pod, node labels, node name, args, want PreFilter (result names, status), want Filter status)
FILTER_CASES: list[tuple[str, MakePod, dict[str, str], str, dict[str, Any] | None,
                         tuple[set[str] | None, Status | None], Status | None]] = [
    ("missing labels", selector({"foo": "bar"}), {}, "n", None, (None, None), UNRESOLVABLE_POD),
    ("same labels", selector({"foo": "bar"}), {"foo": "bar"}, "n", None, (None, None), None),
    ("node labels are superset", selector({"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "n", None, (None, None),
     None),
    ("node labels are subset", selector({"foo": "bar", "baz": "blah"}), {"foo": "bar"}, "n", None, (None, None),
     UNRESOLVABLE_POD),
    ("In matches", required(term(expr("foo", "In", "bar", "value2"))), {"foo": "bar"}, "n", None, (None, None), None),
    ("Gt matches", required(term(expr("kernel-version", "Gt", "0204"))), {"kernel-version": "0206"}, "n", None,
     (None, None), None),
    ("NotIn matches", required(term(expr("mem-type", "NotIn", "DDR", "DDR2"))), {"mem-type": "DDR3"}, "n", None,
     (None, None), None),
    ("Exists matches", required(term(expr("GPU", "Exists"))), {"GPU": "NVIDIA-GRID-K1"}, "n", None, (None, None), None),
    ("In does not match", required(term(expr("foo", "In", "value1", "value2"))), {"foo": "bar"}, "n", None,
     (None, None), UNRESOLVABLE_POD),
    ("empty matchExpressions matches nothing", required(term()), {"foo": "bar"}, "n", None, (None, None),
     UNRESOLVABLE_POD),
    ("no affinity skips", MakePod().name("p"), {"foo": "bar"}, "n", None, (None, Status(Code.SKIP)), None),
    ("ANDed expressions match", required(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER"))),
     {"GPU": "NVIDIA-GRID-K1"}, "n", None, (None, None), None),
    ("ANDed expressions do not match", required(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER"))),
     {"GPU": "NVIDIA-GRID-K1"}, "n", None, (None, None), UNRESOLVABLE_POD),
    ("ORed terms, one matches", required(term(expr("foo", "In", "bar", "value2")),
                                         term(expr("diffkey", "In", "wrong", "value2"))),
     {"foo": "bar"}, "n", None, (None, None), None),
    ("affinity and nodeSelector both satisfied",
     required(term(expr("foo", "Exists"))).node_selector({"foo": "bar"}), {"foo": "bar"}, "n", None, (None, None),
     None),
    ("affinity satisfied but nodeSelector not",
     required(term(expr("foo", "Exists"))).node_selector({"foo": "bar"}), {"foo": "barrrrrr"}, "n", None,
     (None, None), UNRESOLVABLE_POD),
    ("invalid value in a term matches nothing", required(term(expr("foo", "NotIn", "invalid value: ___@#$%^"))),
     {"foo": "bar"}, "n", None, (None, None), UNRESOLVABLE_POD),
    ("matchFields In matches", required(term(fields=[expr(NAME, "In", "node1")])), {}, "node1", None,
     ({"node1"}, None), None),
    ("matchFields In does not match", required(term(fields=[expr(NAME, "In", "node1")])), {}, "node2", None,
     ({"node1"}, None), UNRESOLVABLE_POD),
    ("two terms: fields miss, expressions match",
     required(term(fields=[expr(NAME, "In", "node1"), expr(NAME, "In", "node2")]), term(expr("foo", "In", "bar"))),
     {"foo": "bar"}, "node2", None, (None, None), None),
    ("one term: fields miss, expressions match",
     required(term(expr("foo", "In", "bar"), fields=[expr(NAME, "In", "node1")])),
     {"foo": "bar"}, "node2", None, ({"node1"}, None), UNRESOLVABLE_POD),
    ("one term: both match",
     required(term(expr("foo", "In", "bar"), fields=[expr(NAME, "In", "node1")])),
     {"foo": "bar"}, "node1", None, ({"node1"}, None), None),
    ("two terms: neither matches",
     required(term(fields=[expr(NAME, "In", "node1")]), term(expr("foo", "In", "not-match-to-bar"))),
     {"foo": "bar"}, "node2", None, (None, None), UNRESOLVABLE_POD),
    ("two terms of node name",
     required(term(fields=[expr(NAME, "In", "node1")]), term(fields=[expr(NAME, "In", "node2")])),
     {}, "node2", None, ({"node1", "node2"}, None), None),
    ("conflicting matchFields",
     required(term(fields=[expr(NAME, "In", "node1"), expr(NAME, "In", "node2")])), {"foo": "bar"}, "node2", None,
     (None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)), UNRESOLVABLE_POD),
    ("matches added affinity and pod affinity", required(term(expr("zone", "In", "foo"))), {"zone": "foo"}, "node2",
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
         "nodeSelectorTerms": [term(fields=[expr(NAME, "In", "node2")])]}}}, (None, None), None),
    ("matches added affinity but not pod affinity", required(term(expr("zone", "In", "bar"))), {"zone": "foo"}, "node2",
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
         "nodeSelectorTerms": [term(fields=[expr(NAME, "In", "node2")])]}}}, (None, None), UNRESOLVABLE_POD),
    ("does not match added affinity", MakePod().name("p"), {"zone": "foo"}, "node2",
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
         "nodeSelectorTerms": [term(expr("zone", "In", "bar"))]}}},
     (None, None), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)),
    ("Lt matches", required(term(expr("v", "Lt", "10"))), {"v": "9"}, "n", None, (None, None), None),
    ("Gt on a non-integer label does not match", required(term(expr("v", "Gt", "1"))), {"v": "2a"}, "n", None,
     (None, None), UNRESOLVABLE_POD),
    ("Gt on a missing label does not match", required(term(expr("v", "Gt", "1"))), {}, "n", None, (None, None),
     UNRESOLVABLE_POD),
    ("Gt with a non-integer bound matches nothing", required(term(expr("v", "Gt", "x"))), {"v": "5"}, "n", None,
     (None, None), UNRESOLVABLE_POD),
    ("Gt with two values matches nothing", required(term(expr("v", "Gt", "1", "2"))), {"v": "5"}, "n", None,
     (None, None), UNRESOLVABLE_POD),
    ("Gt with a negative bound is an invalid label value", required(term(expr("v", "Gt", "-1"))), {"v": "5"}, "n",
     None, (None, None), UNRESOLVABLE_POD),
    ("DoesNotExist matches an absent key", required(term(expr("gpu", "DoesNotExist"))), {"a": "b"}, "n", None,
     (None, None), None),
    ("DoesNotExist fails on a present key", required(term(expr("gpu", "DoesNotExist"))), {"gpu": ""}, "n", None,
     (None, None), UNRESOLVABLE_POD),
    ("NotIn matches an absent key", required(term(expr("a", "NotIn", "x"))), {}, "n", None, (None, None), None),
    ("In with no values matches nothing", required(term(expr("a", "In"))), {"a": ""}, "n", None, (None, None),
     UNRESOLVABLE_POD),
    ("Exists with values matches nothing", required(term(expr("a", "Exists", "x"))), {"a": "x"}, "n", None,
     (None, None), UNRESOLVABLE_POD),
    ("unknown operator matches nothing", required(term(expr("a", "Equals", "x"))), {"a": "x"}, "n", None,
     (None, None), UNRESOLVABLE_POD),
    ("invalid term does not hide a valid one", required(term(expr("a", "Bogus")), term(expr("b", "Exists"))),
     {"b": "1"}, "n", None, (None, None), None),
    ("matchFields NotIn", required(term(fields=[expr(NAME, "NotIn", "node1")])), {}, "node2", None, (None, None), None),
    ("matchFields NotIn excludes", required(term(fields=[expr(NAME, "NotIn", "node2")])), {}, "node2", None,
     (None, None), UNRESOLVABLE_POD),
    ("matchFields with two values is invalid", required(term(fields=[expr(NAME, "In", "node1", "node2")])), {},
     "node1", None, ({"node1", "node2"}, None), UNRESOLVABLE_POD),
    ("matchFields with Exists is invalid", required(term(fields=[expr(NAME, "Exists")])), {}, "node1", None,
     (None, None), UNRESOLVABLE_POD),
    ("matchFields on another field reads empty", required(term(fields=[expr("metadata.uid", "NotIn", "x")])), {},
     "node1", None, (None, None), None),
    ("required with no terms matches nothing", required(), {"a": "b"}, "n", None, (None, None), UNRESOLVABLE_POD),
    ("prefixed label key", required(term(expr("topology.kubernetes.io/zone", "In", "z1"))),
     {"topology.kubernetes.io/zone": "z1"}, "n", None, (None, None), None),
    ("invalid label key matches nothing", required(term(expr("Bad_Prefix/zone", "In", "z1"))),
     {"Bad_Prefix/zone": "z1"}, "n", None, (None, None), UNRESOLVABLE_POD),
    ("only an added affinity runs the filter", MakePod().name("p"), {"zone": "foo"}, "n",
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
         "nodeSelectorTerms": [term(expr("zone", "In", "foo"))]}}}, (None, None), None),
]


@pytest.mark.parametrize(("pod", "labels", "node_name", "args", "want_pre", "want"),
                         [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(pod: MakePod, labels: dict[str, str], node_name: str, args: dict[str, Any] | None,
                want_pre: tuple[set[str] | None, Status | None], want: Status | None) -> None:
    pl = NodeAffinity.new(args, None)  # type: ignore[arg-type]  # the plugin reads no handle
    info = pod.info()
    node = MakeNode().name(node_name).labels(labels).info()
    state = CycleState()
    result, status = pl.pre_filter(state, info, [node])
    assert status == want_pre[1]
    assert (result.node_names if result is not None else None) == want_pre[0]
    if status is not None and status.is_skip():
        return
    assert pl.filter(state, info, node) == want
    # Filter gives the same answer when PreFilter did not run.
    assert pl.filter(CycleState(), info, node) == want


AFFINITY1 = [(2, term(expr("foo", "In", "bar")))]
AFFINITY2 = [(2, term(expr("foo", "In", "bar"))), (4, term(expr("key", "In", "value"))),
             (5, term(expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")))]
LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

SCORE_CASES: list[tuple[str, list[tuple[int, dict[str, Any]]], list[dict[str, str]], dict[str, Any] | None,
                        list[int]]] = [
    ("no affinity, all zero", [], [LABEL1, LABEL2, LABEL3], None, [0, 0, 0]),
    ("no node matches", AFFINITY1, [LABEL4, LABEL2, LABEL3], None, [0, 0, 0]),
    ("only node1 matches", AFFINITY1, [LABEL1, LABEL2, LABEL3], None, [100, 0, 0]),
    ("different priorities", AFFINITY2, [LABEL1, LABEL5, LABEL2], None, [18, 100, 36]),
    ("added affinity", [], [LABEL1, LABEL2], {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 2, "preference": term(expr("foo", "In", "bar"))}]}}, [100, 0]),
    ("added affinity and pod affinity", AFFINITY1, [LABEL1, LABEL2, LABEL5],
     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         {"weight": 3, "preference": term(expr("key", "In", "value"))}]}}, [40, 60, 100]),
    ("zero-weight term ignored", [(0, term(expr("foo", "In", "bar")))], [LABEL1, LABEL2], None, [0, 0]),
    ("preferred matchFields", [(7, term(fields=[expr(NAME, "In", "node1")]))], [{}, {}], None, [0, 100]),
]


@pytest.mark.parametrize(("preferred", "node_labels", "args", "expected"), [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
@pytest.mark.parametrize("run_pre_score", [True, False], ids=["pre-score", "no-pre-score"])
def test_score(preferred: list[tuple[int, dict[str, Any]]], node_labels: list[dict[str, str]],
               args: dict[str, Any] | None, expected: list[int], run_pre_score: bool) -> None:
    pod = MakePod().name("p")
    for weight, t in preferred:
        pod.node_affinity_preferred(weight, t)
    info = pod.info()
    pl = NodeAffinity.new(args, None)  # type: ignore[arg-type]  # the plugin reads no handle
    nodes = [MakeNode().name(f"node{i}").labels(lbl).info() for i, lbl in enumerate(node_labels)]
    state = CycleState()
    if run_pre_score:
        status = pl.pre_score(state, info, nodes)
        if not preferred and args is None:
            assert status == Status(Code.SKIP)
            return
        assert status is None
    scores = []
    for n in nodes:
        score, status = pl.score(state, info, n)
        assert status is None
        scores.append(NodeScore(n.name, score))
    assert pl.normalize_score(state, info, scores) is None
    assert [s.score for s in scores] == expected


def test_invalid_preferred_term_is_a_pre_score_error() -> None:
    pod = MakePod().name("p").node_affinity_preferred(1, term(expr("v", "Gt", "x"))).info()
    status = NodeAffinity().pre_score(CycleState(), pod, [])
    assert status is not None and status.code == Code.ERROR


@pytest.mark.parametrize("args", [
    {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term(expr("a", "Gt", "x"))]}}},
    {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": term(fields=[expr(NAME, "Exists")])}]}},
    {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": "nope"}},
    {"unknownField": 1},
], ids=["bad required term", "bad preferred term", "wrong type", "unknown field"])
def test_invalid_args(args: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        NodeAffinity.new(args, None)  # type: ignore[arg-type]  # the plugin reads no handle


@pytest.mark.parametrize(("text", "want"), [
    ("0204", 204), ("+5", 5), ("-5", -5), (" 5", None), ("1_0", None), ("", None), ("9223372036854775808", None),
    ("9223372036854775807", 2**63 - 1), (None, None), ("٣", None),
], ids=["leading zero", "plus", "minus", "space", "underscore", "empty", "overflow", "max", "none", "non-ascii digit"])
def test_parse_int64(text: str | None, want: int | None) -> None:
    assert parse_int64(text) == want


def test_events_to_register() -> None:
    (event,) = NodeAffinity().events_to_register()
    assert events.ClusterEvent(events.NODE, events.ActionType.UPDATE_NODE_LABEL).matches(event)
    assert events.NODE_ADD.matches(event)
    assert not events.ASSIGNED_POD_ADD.matches(event)
