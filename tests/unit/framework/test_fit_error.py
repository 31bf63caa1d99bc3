from shared.framework.status import Code, Status
from shared.scheduler.fit_error import Diagnosis, FitError


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
    assert FitError("default/p", 1, d).message() == "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory."


def test_prefilter_message_replaces_node_histogram() -> None:
    d = Diagnosis()
    d.node_to_status["n1"] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x")
    d.pre_filter_msg = "node(s) didn't satisfy plugin NodeAffinity"
    assert FitError("default/p", 3, d).message() == "0/3 nodes are available: node(s) didn't satisfy plugin NodeAffinity."


def test_post_filter_message_appended_without_extra_period() -> None:
    d = Diagnosis()
    d.node_to_status["n1"] = Status(Code.UNSCHEDULABLE, "Insufficient cpu")
    d.post_filter_msg = "preemption: not eligible due to preemptionPolicy=Never."
    assert FitError("default/p", 1, d).message() == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
    )
