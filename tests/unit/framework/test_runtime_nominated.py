"""Framework.nominations_keys: equal for two asks only when the nominated pods Filter counts
are the same, so a verdict kept under it is never read for other pods."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.framework.runtime import Framework
from shared.queue import Nominator
from tests.unit.preemption.harness import pod

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
