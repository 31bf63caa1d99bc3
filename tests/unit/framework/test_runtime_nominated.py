"""Framework.nominations_keys: equal for two asks only when the nominated pods Filter counts
are the same, so a verdict kept under it is never read for other pods; and the node copied with
those pods, kept while the node and the pods stay the same."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.framework.cycle_state import CycleState
from shared.framework.runtime import NOMINATED_COPIES, Framework
from shared.queue import Nominator
from tests.builders import MakeNode
from tests.unit.preemption.harness import INSUFFICIENT_CPU, make_framework, pod

NODES = ["n1", "n2"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "delete"]), st.integers(0, 4), st.sampled_from(NODES)),
                max_size=12))
def test_equal_keys_mean_equal_counted_pods(steps: list[tuple[str, int, str]]) -> None:
    pods = [pod(f"p{i}", priority) for i, priority in enumerate([0, 10, 10, 100, 5])]
    fwk = Framework("test", {}, {})
    nominator = Nominator()
    fwk.set_nominator(nominator)
    seen: dict[object, list[str]] = {}
    for action, k, node in steps:
        if action == "add":
            nominator.add_nominated_pod(pods[k], node)
        else:
            nominator.delete_nominated_pod_if_exists(pods[k])
        for asking in pods:
            keys = fwk.nominations_keys(asking)
            assert keys is not None
            for name in NODES:
                key = keys(name)
                counted = [p.uid for p in fwk.counted_nominations(asking, name)]
                assert seen.setdefault((name, key), counted) == counted


def test_without_stamps_there_is_no_key() -> None:
    fwk = Framework("test", {}, {})

    class Plain:
        def nominated_pods_for_node(self, node_name: str) -> list:
            return []

    fwk.set_nominator(Plain())
    assert fwk.nominations_keys(pod("a", 1)) is None


def test_the_copy_with_nominated_pods_serves_pods_that_count_the_same() -> None:
    node = MakeNode().name("n1").capacity(cpu="4").info()
    high, low, asking = pod("high", 100, cpu="2"), pod("low", 1, cpu="1"), pod("asking", 10, cpu="3")
    fwk, _ = make_framework([node], nominated={"n1": [high, low]})
    state = CycleState()
    fwk.run_pre_filter_plugins(state, asking)
    status = fwk.run_filter_plugins_with_nominated_pods(state, asking, node)
    assert status is not None and status.message() == INSUFFICIENT_CPU  # 2 + 3 of 4: high counts, low does not
    counted = fwk.counted_nominations(asking, "n1")
    copy = fwk._node_with(node, counted)
    assert copy is fwk._node_with(node, counted) and copy.requested.milli_cpu == 2000 and copy.is_clone
    assert node.requested.milli_cpu == 0, "the node itself is left as it was"
    node.add_pod(pod("running", 0, cpu="1"))  # the node changed: a new copy
    assert fwk._node_with(node, counted) is not copy
    assert fwk._node_with(node, counted).requested.milli_cpu == 3000


def test_copies_are_kept_for_a_bounded_number_of_nodes() -> None:
    fwk = Framework("test", {}, {})
    nominated = [pod("high", 100)]
    for i in range(NOMINATED_COPIES + 10):
        fwk._node_with(MakeNode().name(f"n{i}").capacity(cpu="4").info(), nominated)
    assert len(fwk._with_nominated) == NOMINATED_COPIES



def test_a_node_copied_again_is_dropped_last() -> None:
    fwk = Framework("test", {}, {})
    nominated = [pod("high", 100)]
    busy = MakeNode().name("busy").capacity(cpu="4").info()
    fwk._node_with(busy, nominated)  # the first entry
    for i in range(NOMINATED_COPIES - 1):
        fwk._node_with(MakeNode().name(f"n{i}").capacity(cpu="4").info(), nominated)
    busy.add_pod(pod("running", 0, cpu="1"))  # changed: copied again, now the newest entry
    fwk._node_with(busy, nominated)
    fwk._node_with(MakeNode().name("late").capacity(cpu="4").info(), nominated)  # one over the bound
    assert "busy" in fwk._with_nominated and "n0" not in fwk._with_nominated
    assert len(fwk._with_nominated) == NOMINATED_COPIES
