"""Failures travel grouped by equal status; grouping and ungrouping keep every node's status and
the order nodes were given in, whether equal statuses are one object or several."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.framework.status import Code, Status
from shared.protocol.failure_groups import group_failures, ungroup_failures

REASONS = ["Insufficient cpu", "node(s) had untolerated taint {t: v}", "Too many pods"]


def _reference(pairs: list[tuple[str, Status]]) -> list[tuple[tuple[object, ...], list[str]]]:
    groups: dict[tuple[object, ...], list[str]] = {}
    for name, s in pairs:
        groups.setdefault((s.code, tuple(s.reasons), s.plugin), []).append(name)
    return list(groups.items())


@settings(max_examples=300, deadline=None)
@given(picks=st.lists(st.tuples(st.integers(0, 2), st.booleans()), max_size=30))
def test_groups_are_equal_statuses_in_the_given_order(picks: list[tuple[int, bool]]) -> None:
    shared = [Status(Code.UNSCHEDULABLE, r, plugin="P") for r in REASONS]
    # `fresh`: an equal status as another object, as statuses from two shards are.
    pairs = [(f"n{i}", Status(Code.UNSCHEDULABLE, REASONS[k], plugin="P") if fresh else shared[k])
             for i, (k, fresh) in enumerate(picks)]
    got = [((f.code, tuple(f.reasons), f.plugin), f.nodes) for f in group_failures(pairs)]
    assert [(key[1:], nodes) for key, nodes in got] == [(key[1:], nodes) for key, nodes in _reference(pairs)]
    back = ungroup_failures(group_failures(pairs))
    assert {n: (s.code, s.reasons) for n, s in back.items()} == {n: (s.code, s.reasons) for n, s in pairs}
    assert len({id(s) for s in back.values()}) == len({(s.code, tuple(s.reasons)) for _, s in pairs})
