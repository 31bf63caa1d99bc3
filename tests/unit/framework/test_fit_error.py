from types import SimpleNamespace

import numpy as np

from shared.framework.node_info import NodeInfo
from shared.framework.status import Code, Status
from shared.indexes.rejections import Rejections, StatusTable
from shared.scheduler.fit_error import Diagnosis, FitError
from tests.builders import MakeNode


def test_histogram_sorted_as_go_strings() -> None:
    d = Diagnosis()
    for i in range(10):
        d.node_to_status[f"a{i}"] = Status(Code.UNSCHEDULABLE, "Insufficient cpu")
    d.node_to_status["b"] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {k: v}")
    d.node_to_status["b2"] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {k: v}")
    d.post_filter_msg = "preemption: 0/12 nodes are available: 12 Preemption is not helpful for scheduling."
    # "10 ..." sorts before "2 ..." byte-wise, as upstream's sort.Strings.
    assert FitError("default/p", 12, d).message() == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint {k: v}. "
        "preemption: 0/12 nodes are available: 12 Preemption is not helpful for scheduling."
    )


def test_multiple_reasons_per_node_all_counted() -> None:
    d = Diagnosis()
    d.node_to_status["n1"] = Status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory")
    assert FitError("default/p", 1, d).message() == (
        "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.")


def test_prefilter_message_replaces_node_histogram() -> None:
    d = Diagnosis()
    d.node_to_status["n1"] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x")
    d.pre_filter_msg = "node(s) didn't satisfy plugin NodeAffinity"
    assert FitError("default/p", 3, d).message() == (
        "0/3 nodes are available: node(s) didn't satisfy plugin NodeAffinity.")


def test_post_filter_message_appended_without_extra_period() -> None:
    d = Diagnosis()
    d.node_to_status["n1"] = Status(Code.UNSCHEDULABLE, "Insufficient cpu")
    d.post_filter_msg = "preemption: not eligible due to preemptionPolicy=Never."
    assert FitError("default/p", 1, d).message() == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
    )


def _rejections() -> tuple[list[NodeInfo], Rejections]:
    nodes = [MakeNode().name(f"n{i}").info() for i in range(5)]
    names = [n.name for n in nodes]
    table = StatusTable()
    cpu = table.intern(Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin="NodeResourcesFit"))
    taint = table.intern(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {k: v}",
                                plugin="TaintToleration"))
    # Walk order 3, 4, 0, 1; n2 fit.
    walked_nodes = SimpleNamespace(nodes=nodes, names=names, position={n: i for i, n in enumerate(names)})
    walked = Rejections(walked_nodes, table, np.array([3, 4, 0, 1], dtype=np.intp),
                        np.array([cpu, taint, cpu, cpu], dtype=np.int32))
    return nodes, walked


def test_rejections_read_lazily_as_the_dict_they_stand_for() -> None:
    nodes, walked = _rejections()
    d = Diagnosis()
    d.add_rejections(walked)
    plain = dict(walked.pairs())
    statuses = d.node_to_status
    assert len(statuses) == 4 and statuses.get("n2") is None and "n2" not in statuses
    assert statuses["n4"] == plain["n4"] and statuses.get("n3") is plain["n3"]
    assert d.unschedulable_plugins == {"NodeResourcesFit", "TaintToleration"}
    assert sorted((s.reasons, n) for s, n in statuses.status_counts()) == [
        (("Insufficient cpu",), 3), (("node(s) had untolerated taint {k: v}",), 1)]
    # The nodes preemption may help, in the node list's order (not walk order).
    assert [n.name for n in statuses.nodes_with_code(Code.UNSCHEDULABLE, nodes)] == ["n0", "n1", "n3"]
    assert FitError("p", 5, d).message() == (
        "0/5 nodes are available: 1 node(s) had untolerated taint {k: v}, 3 Insufficient cpu.")
    # Iterating or changing the map turns it into the plain dict, in walk order.
    assert list(statuses) == ["n3", "n4", "n0", "n1"]
    statuses["n2"] = Status(Code.UNSCHEDULABLE, "other")
    assert list(statuses) == ["n3", "n4", "n0", "n1", "n2"] and len(statuses) == 5
    assert [n.name for n in statuses.nodes_with_code(Code.UNSCHEDULABLE, nodes)] == ["n0", "n1", "n2", "n3"]


def test_a_plain_mapping_assigned_to_the_diagnosis_is_kept_as_given() -> None:
    d = Diagnosis()
    d.node_to_status = {"a": Status(Code.UNSCHEDULABLE, "Insufficient cpu")}
    assert dict(d.node_to_status) == {"a": Status(Code.UNSCHEDULABLE, "Insufficient cpu")}
    assert FitError("p", 2, d).message() == "0/2 nodes are available: 1 Insufficient cpu."
