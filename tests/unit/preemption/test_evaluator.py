"""Dry run, victim selection on one node, eligibility and the extender hook (upstream
TestDryRunPreemption, TestSelectVictimsOnNode-style and TestPodEligibleToPreemptOthers facts)."""

from __future__ import annotations

from typing import Any

import pytest

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import PostFilterResult
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.plugins.defaultpreemption import DefaultPreemption
from shared.preemption import Victims
from shared.queue import Nominator
from tests.builders import MakeNode, MakePod
from tests.unit.preemption.harness import EXCLUSIVE, CpuFit, FakeNominator, filter_statuses, make_framework, pdb, pod

T1, T2, T3 = "2024-01-01T00:00:01Z", "2024-01-01T00:00:02Z", "2024-01-01T00:00:03Z"


def node(name: str, cpu: str, *pods: PodInfo) -> NodeInfo:
    return MakeNode().name(name).capacity(cpu=cpu).info(*pods)


def dry_run(nodes: list[NodeInfo], preemptor: PodInfo,
            **kw: Any) -> tuple[dict[str, tuple[list[str], int]], dict[str, Status]]:
    fwk, plugin = make_framework(nodes, **kw)
    state, statuses = filter_statuses(fwk, preemptor)
    ev = plugin.evaluator
    candidates, node_statuses, errors = ev.find_candidates(state, fwk.snapshot().node_info_list, preemptor, statuses)
    assert not errors
    return {c.name: ([p.name for p in c.victims.pods], c.victims.num_pdb_violations) for c in candidates}, node_statuses


def test_fits_on_both_nodes_when_lower_priority_pods_are_preempted() -> None:
    nodes = [node("node1", "2", pod("p1", 1, "2", node="node1")), node("node2", "2", pod("p2", 1, "2", node="node2"))]
    got, _ = dry_run(nodes, pod("p", 100, "2"))
    assert got == {"node1": (["p1"], 0), "node2": (["p2"], 0)}


def test_higher_priority_pods_are_never_victims() -> None:
    nodes = [node("node1", "2", pod("p1", 200, "2", node="node1"))]
    got, statuses = dry_run(nodes, pod("p", 100, "2"))
    assert got == {}
    assert statuses["node1"] == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                       "No preemption victims found for incoming pod")


def test_medium_priority_pod_is_preempted_small_low_priority_pod_stays() -> None:
    n = node("node1", "4", pod("low", 1, "1", node="node1"), pod("mid", 50, "2", node="node1"),
             pod("high", 200, "1", node="node1"))
    got, _ = dry_run([n], pod("p", 100, "2"))
    # Reprieve goes from the most important down: with mid back the preemptor lacks room, so mid
    # is the victim; low still fits beside the preemptor and is reprieved.
    assert got == {"node1": (["mid"], 0)}


def test_mixed_priority_victims_are_ordered_most_important_first() -> None:
    n = node("node1", "4", pod("a", 10, "1", start=T2, node="node1"), pod("b", 20, "1", node="node1"),
             pod("c", 10, "1", start=T1, node="node1"), pod("d", 300, "1", node="node1"))
    got, _ = dry_run([n], pod("p", 100, "3"))
    assert got == {"node1": (["b", "c", "a"], 0)}


def test_pdb_protected_pod_is_reprieved_first() -> None:
    # Room for the preemptor plus one of the two: without the PDB "important" (higher priority)
    # would be reprieved; the PDB makes "protected" violating, and violating pods go first.
    n = node("node1", "3", pod("important", 50, "1", node="node1"),
             pod("protected", 10, "1", labels={"app": "db"}, node="node1"))
    preemptor = pod("p", 100, "2")
    assert dry_run([n], preemptor)[0] == {"node1": (["protected"], 0)}
    n = node("node1", "3", pod("important", 50, "1", node="node1"),
             pod("protected", 10, "1", labels={"app": "db"}, node="node1"))
    got, _ = dry_run([n], preemptor, pdbs=[pdb("db", {"app": "db"}, allowed=0)])
    assert got == {"node1": (["important"], 0)}


def test_pdb_violations_counted_and_non_violating_candidates_first() -> None:
    foo = {"app": "foo"}
    nodes = [
        node("node1", "2", pod("p1", 1, "1", start=T1, labels=foo, node="node1"),
             pod("p2", 1, "1", start=T2, labels=foo, node="node1")),
        node("node2", "2", pod("p3", 1, "2", node="node2")),
    ]
    got, _ = dry_run(nodes, pod("p", 100, "2"), pdbs=[pdb("b", foo, allowed=1)], offset=0)
    assert list(got) == ["node2", "node1"]
    # p2 (the budget's second pod) violates; both are evicted, re-sorted by importance.
    assert got["node1"] == (["p1", "p2"], 1)


@pytest.mark.parametrize(("disrupted", "violations"), [([], 2), (["p1"], 1), (["p1", "p2"], 0)],
                         ids=["none-processed", "one-processed", "all-processed"])
def test_pdb_disrupted_pods_do_not_count_as_violations(disrupted: list[str], violations: int) -> None:
    foo = {"app": "foo"}
    n = node("node1", "2", pod("p1", 1, "1", labels=foo, node="node1"), pod("p2", 1, "1", labels=foo, node="node1"))
    got, _ = dry_run([n], pod("p", 100, "2"), pdbs=[pdb("b", foo, allowed=0, disrupted=disrupted)])
    assert got["node1"][1] == violations


def test_dry_run_stops_after_enough_candidates_scanning_from_the_offset() -> None:
    nodes = [node(f"node{i}", "1", pod(f"p{i}", 1, "1", node=f"node{i}")) for i in range(1, 6)]
    args = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}
    got, statuses = dry_run(nodes, pod("p", 100, "1"), args=args, offset=3)
    assert list(got) == ["node4", "node5"] and statuses == {}
    got, _ = dry_run(nodes, pod("p", 100, "1"), args=args, offset=4)
    assert list(got) == ["node5", "node1"]


def test_dry_run_keeps_scanning_until_a_non_violating_candidate() -> None:
    foo = {"app": "foo"}
    nodes = [node(f"node{i}", "1", pod(f"p{i}", 1, "1", labels=foo, node=f"node{i}")) for i in range(1, 4)]
    nodes.append(node("node4", "1", pod("free", 1, "1", node="node4")))
    args = {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}
    got, _ = dry_run(nodes, pod("p", 100, "1"), args=args, offset=0, pdbs=[pdb("b", foo, allowed=0)])
    # Violating candidates beyond the wanted number are dropped; the scan goes on to node4.
    assert list(got) == ["node4", "node1"]


def test_prefilter_state_is_updated_through_the_extensions_and_cloned() -> None:
    # The preemptor is rejected only through PreFilter state (another exclusive pod is there);
    # removing that pod in the dry run must go through RemovePod, on a clone.
    ex = {EXCLUSIVE: "y"}
    nodes = [node("node1", "4", pod("ex-low", 1, "0", labels=ex, node="node1"), pod("other", 1, "0", node="node1"))]
    fwk, plugin = make_framework(nodes)
    preemptor = pod("p", 100, "1", labels=ex)
    state, statuses = filter_statuses(fwk, preemptor)
    assert statuses["node1"].reasons == ("node(s) had an exclusive pod",)
    result, status = plugin.post_filter(state, preemptor, statuses)
    assert status is not None and status.code == Code.SUCCESS and result is not None
    assert [v.name for v in result.victims] == ["ex-low"]
    assert state.read("PreFilterTestExclusive").per_node["node1"] == 1  # the cycle's own state is untouched
    assert len(fwk.snapshot().node_info_map["node1"].pods) == 2  # and so is the snapshot


def test_not_enough_room_even_after_removing_all_victims() -> None:
    got, statuses = dry_run([node("node1", "2", pod("low", 1, "1", node="node1"))], pod("p", 100, "3"))
    assert got == {} and statuses["node1"] == Status(Code.UNSCHEDULABLE, "Insufficient cpu")


def test_nominated_higher_priority_pods_keep_their_room() -> None:
    nominated = MakePod().name("nom").priority(500).req(cpu="1").nominated_node("node1").info()
    nodes = [node("node1", "2", pod("low", 1, "1", node="node1"))]
    got, statuses = dry_run(nodes, pod("p", 100, "2"), nominated={"node1": [nominated]})
    assert got == {} and statuses["node1"].reasons == ("Insufficient cpu",)


# -- eligibility ----------------------------------------------------------------------------------
def _terminating(name: str, priority: int, node_name: str, by_scheduler: bool = True) -> PodInfo:
    b = MakePod().name(name).priority(priority).req(cpu="1").node(node_name)
    b.raw()["metadata"]["deletionTimestamp"] = T1
    if by_scheduler:
        b.raw().setdefault("status", {})["conditions"] = [
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    return b.info()


@pytest.mark.parametrize(("victim_priority", "by_scheduler", "nominated_status", "want"), [
    (1, True, Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
     (False, "not eligible due to a terminating pod on the nominated node.")),
    (1, True, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "x"), (True, "")),
    (1, True, None, (True, "")),  # the nominated node is absent from the statuses: unresolvable
    (200, True, Status(Code.UNSCHEDULABLE, "Insufficient cpu"), (True, "")),
    (1, False, Status(Code.UNSCHEDULABLE, "Insufficient cpu"), (True, "")),
], ids=["terminating-victim", "nominated-node-unresolvable", "nominated-node-absent", "terminating-higher-priority",
        "deleted-not-by-preemption"])
def test_pod_eligible_to_preempt_others(victim_priority: int, by_scheduler: bool, nominated_status: Status | None,
                                        want: tuple[bool, str]) -> None:
    nodes = [node("node1", "2", _terminating("t", victim_priority, "node1", by_scheduler))]
    fwk, plugin = make_framework(nodes)
    p = MakePod().name("p").priority(100).req(cpu="2").nominated_node("node1").info()
    statuses = {"node1": nominated_status} if nominated_status is not None else {}
    result, status = plugin.evaluator.preempt(CycleState(), p, statuses)
    ok, msg = want
    if ok:
        assert not status.message().startswith("not eligible")
    else:
        assert result is None and status == Status(Code.UNSCHEDULABLE, msg)


def test_policy_never_checked_before_nomination() -> None:
    fwk, plugin = make_framework([node("node1", "1")])
    p = MakePod().name("p").priority(100).preemption_policy("Never").info()
    assert plugin.pod_eligible_to_preempt_others(p, None) == (False, "not eligible due to preemptionPolicy=Never.")


# -- extenders ------------------------------------------------------------------------------------
class Ext:
    name = "ext"

    def __init__(self, keep: set[str] | None, supports: bool = True, fail: bool = False, ignorable: bool = False,
                 empty_for: str = "") -> None:
        self.keep, self.supports, self.fail, self.ignorable, self.empty_for = keep, supports, fail, ignorable, empty_for
        self.seen: dict[str, Victims] | None = None

    def supports_preemption(self) -> bool:
        return self.supports

    def is_interested(self, pod: PodInfo) -> bool:
        return True

    def is_ignorable(self) -> bool:
        return self.ignorable

    def process_preemption(self, pod: PodInfo, node_to_victims: dict[str, Victims]) -> dict[str, Victims]:
        self.seen = dict(node_to_victims)
        if self.fail:
            raise RuntimeError("extender down")
        out = {n: v for n, v in node_to_victims.items() if self.keep is None or n in self.keep}
        if self.empty_for:
            out[self.empty_for] = Victims([])
        return out


def _two_nodes() -> list[NodeInfo]:
    return [node("node1", "2", pod("p1", 1, "2", node="node1")), node("node2", "2", pod("p2", 5, "2", node="node2"))]


def _preempt_with(*extenders: Ext) -> tuple[PostFilterResult | None, Status]:
    fwk, plugin = make_framework(_two_nodes(), extenders=list(extenders))
    preemptor = pod("p", 100, "2")
    state, statuses = filter_statuses(fwk, preemptor)
    result, status = plugin.post_filter(state, preemptor, statuses)
    assert status is not None  # PostFilter always answers with a status
    return result, status


def test_extender_filters_candidates() -> None:
    ext = Ext(keep={"node2"})
    result, status = _preempt_with(ext)
    assert status.code == Code.SUCCESS and result is not None and result.nominated_node_name == "node2"
    assert ext.seen is not None and set(ext.seen) == {"node1", "node2"}


def test_extender_without_preemption_support_is_skipped() -> None:
    ext = Ext(keep=set(), supports=False)
    result, _ = _preempt_with(ext)
    assert result is not None and result.nominated_node_name == "node1" and ext.seen is None


def test_extender_removing_all_candidates_leaves_no_candidate() -> None:
    result, status = _preempt_with(Ext(keep=set()))
    assert result is None and status == Status(Code.UNSCHEDULABLE, "preemption: no candidate node for preemption")


@pytest.mark.parametrize(("ext", "want"), [
    (Ext(keep=None, fail=True), (Code.ERROR, "preemption: extender down")),
    (Ext(keep=None, fail=True, ignorable=True), (Code.SUCCESS, "node1")),
    (Ext(keep=None, empty_for="node3"), (Code.ERROR, 'preemption: expected at least one victim pod on node "node3"')),
    (Ext(keep={"node2"}, empty_for="node3", ignorable=True), (Code.SUCCESS, "node2")),
], ids=["error", "ignorable-error", "empty-victims", "ignorable-empty-victims"])
def test_extender_failures(ext: Ext, want: tuple[Code, str]) -> None:
    result, status = _preempt_with(ext)
    assert status.code == want[0]
    if want[0] == Code.SUCCESS:
        assert result is not None and result.nominated_node_name == want[1]
    else:
        assert result is None and status.message() == want[1]



class _NodeLocalCpuFit(CpuFit):
    NAME = "TestNodeLocalCpuFit"
    NODE_LOCAL = True


def _node_local_framework(nodes: list[NodeInfo]) -> tuple[Framework, Any]:
    fwk = Framework("test", {}, {})
    plugin = DefaultPreemption.new(None, fwk)
    fwk.install({"filter": [_NodeLocalCpuFit()], "postFilter": [plugin]}, {})
    fwk.set_snapshot(Snapshot(nodes))
    fwk.set_nominator(FakeNominator())
    fwk.set_pod_disruption_budgets([])
    return fwk, plugin


def _candidates(fwk: Framework, plugin: Any, preemptor: PodInfo) -> dict[str, list[str]]:
    state, statuses = filter_statuses(fwk, preemptor)
    candidates, _, errors = plugin.evaluator.find_candidates(state, fwk.snapshot().node_info_list, preemptor, statuses)
    assert not errors
    return {c.name: [p.name for p in c.victims.pods] for c in candidates}


def _count_dry_runs(plugin: Any) -> list[str]:
    """The nodes victim selection actually runs on, in order, from now on."""
    computed: list[str] = []
    select = plugin.select_victims_on_node

    def counting(state: CycleState, p: PodInfo, info: NodeInfo, pdbs: Any) -> Any:
        computed.append(info.name)
        return select(state, p, info, pdbs)
    plugin.select_victims_on_node = counting
    return computed


def test_a_node_dry_run_is_remembered_until_the_node_changes() -> None:
    node1 = node("node1", "2", pod("p1", 1, "2", node="node1"))
    node2 = node("node2", "2", pod("p2", 1, "1", node="node2"), pod("p3", 1, "1", node="node2"))
    fwk, plugin = _node_local_framework([node1, node2])
    computed = _count_dry_runs(plugin)

    first = _candidates(fwk, plugin, pod("a", 100, "2"))
    assert first == {"node1": ["p1"], "node2": ["p2", "p3"]} and sorted(computed) == ["node1", "node2"]
    # Another preemptor with the same spec: both answers are reused, nothing is run again.
    assert _candidates(fwk, plugin, pod("b", 100, "2")) == first and len(computed) == 2
    # A different spec is a different question.
    assert _candidates(fwk, plugin, pod("c", 100, "1")) == {"node1": ["p1"], "node2": ["p3"]}
    assert len(computed) == 4
    # node2 changes (a pod leaves): only node2 is asked again, and its answer follows the change.
    node2.remove_pod(next(p for p in node2.pods if p.name == "p3"))
    assert _candidates(fwk, plugin, pod("d", 100, "2")) == {"node1": ["p1"], "node2": ["p2"]}
    assert computed[4:] == ["node2"]


def test_nothing_is_remembered_when_more_than_the_node_decides() -> None:
    nodes = [node("node1", "2", pod("p1", 1, "2", node="node1"))]
    fwk, plugin = make_framework(nodes)  # its exclusive-pod filter reads cluster-wide PreFilter state
    _candidates(fwk, plugin, pod("a", 100, "2"))
    assert plugin.kept()[0] == 0
    fwk, plugin = _node_local_framework([node("node1", "2", pod("p1", 1, "2", node="node1", labels={"app": "x"}))])
    fwk.set_pod_disruption_budgets([pdb("keep", {"app": "x"}, allowed=0)])
    _candidates(fwk, plugin, pod("a", 100, "2"))
    assert plugin.kept()[0] == 0
    fwk, plugin = _node_local_framework([node("node1", "2", pod("p1", 1, "2", node="node1"))])
    fwk.memoize = False  # remembering nothing is how results are checked against the plain path
    _candidates(fwk, plugin, pod("a", 100, "2"))
    assert plugin.kept()[0] == 0


def test_a_dry_run_with_nominated_pods_is_remembered_with_the_pods_it_counted() -> None:
    node1 = node("node1", "4", pod("p1", 1, "1", node="node1"), pod("p2", 1, "1", node="node1"),
                 pod("p3", 1, "2", node="node1"))
    fwk, plugin = _node_local_framework([node1])
    computed = _count_dry_runs(plugin)

    # A higher-priority pod nominated to node1 takes 1 cpu: the 2-cpu preemptor needs p2 and p3
    # gone (p1, reprieved first, stays).
    fwk.set_nominator(FakeNominator({"node1": [pod("n", 200, "1")]}))
    first = _candidates(fwk, plugin, pod("a", 100, "2"))
    assert first == {"node1": ["p2", "p3"]} and len(computed) == 1
    assert _candidates(fwk, plugin, pod("b", 100, "2")) == first and len(computed) == 1
    # A lower-priority nomination is not counted: the node alone decides, as without one.
    fwk.set_nominator(FakeNominator({"node1": [pod("low", 50, "1")]}))
    assert _candidates(fwk, plugin, pod("c", 100, "2")) == {"node1": ["p3"]} and len(computed) == 2
    fwk.set_nominator(FakeNominator())
    assert _candidates(fwk, plugin, pod("d", 100, "2")) == {"node1": ["p3"]} and len(computed) == 2
    # Another counted nomination is another question, answered afresh.
    fwk.set_nominator(FakeNominator({"node1": [pod("n2", 200, "2")]}))
    assert _candidates(fwk, plugin, pod("e", 100, "2")) == {"node1": ["p1", "p2", "p3"]}
    assert len(computed) == 3


def _table_and_plain(nodes: Any, preemptor: PodInfo, args: dict[str, int] | None = None,
                     hook: Any = None) -> tuple[Any, Any]:
    """find_candidates and the pick through the victims table (a logging Nominator) and without it
    (memoize off)."""
    results = []
    for memoize in (True, False):
        fwk, plugin = _node_local_framework(nodes())
        plugin.min_candidate_nodes_percentage = (args or {}).get("percentage", 10)
        plugin.min_candidate_nodes_absolute = (args or {}).get("absolute", 100)
        fwk.set_nominator(Nominator())
        fwk.memoize = memoize
        if hook is not None:
            hook(plugin)
        state, statuses = filter_statuses(fwk, preemptor)
        candidates, node_statuses, errors = plugin.evaluator.find_candidates(
            state, fwk.snapshot().node_info_list, preemptor, statuses)
        assert (plugin.kept()[1] > 0) == memoize
        best = plugin.evaluator.select_candidate(candidates)
        results.append(([(c.name, [p.name for p in c.victims.pods]) for c in candidates],
                        [(n, s.code, s.reasons) for n, s in node_statuses.items()], errors,
                        best.name if best is not None else None))
    return results[0], results[1]


def test_the_victims_table_finds_what_the_plain_dry_run_finds() -> None:
    def nodes() -> list[NodeInfo]:
        return [node(f"node{i}", "2", pod(f"p{i}", 1 if i % 3 else 200, "2", node=f"node{i}")) for i in range(7)]
    table, plain = _table_and_plain(nodes, pod("a", 100, "2"))
    assert table == plain and table[0] and table[1]
    # No candidate wanted (minCandidateNodesAbsolute 0, few nodes): every node is scanned, none kept.
    table, plain = _table_and_plain(nodes, pod("a", 100, "2"), {"percentage": 10, "absolute": 0})
    assert table == plain and table[0] == [] and len(table[1]) == 3


def test_the_victims_table_picks_as_the_ranked_pick_does() -> None:
    # Victims differing in top priority, priority sum, count and start time, with ties among them.
    def nodes() -> list[NodeInfo]:
        out = []
        for i in range(24):
            low, high = 1 + i % 3, 10 + (i // 3) % 2
            start = f"2026-01-01T00:00:{i % 4:02}Z"
            out.append(node(f"node{i}", "3", pod(f"a{i}", low, "1", start=start, node=f"node{i}"),
                            pod(f"b{i}", high, "1", start=start, node=f"node{i}"),
                            pod(f"c{i}", 200, "1", node=f"node{i}")))
        return out
    for need in ("1", "2"):
        table, plain = _table_and_plain(nodes, pod("x", 100, need), {"percentage": 50, "absolute": 1})
        assert table == plain and table[3] is not None


def test_ranks_a_float_cannot_hold_and_score_functions_on_the_instance_take_the_ranked_loop() -> None:
    big = 2**55  # beyond Kubernetes' int32, but nothing stops an input saying it

    def nodes() -> list[NodeInfo]:
        return [node("node0", "2", pod("v0", big, "2", node="node0", start="2026-01-01T00:00:00Z")),
                node("node1", "2", pod("v1", big + 1, "2", node="node1", start="2026-01-01T00:00:09Z"))]
    table, plain = _table_and_plain(nodes, pod("x", big + 100, "2"), {"percentage": 100, "absolute": 1})
    assert table == plain and table[3] == "node0"  # the lower priority, exactly compared

    def four() -> list[NodeInfo]:
        return [node(f"node{i}", "2", pod(f"v{i}", 1 + i, "2", node=f"node{i}")) for i in range(4)]

    def prefer_the_last(plugin: DefaultPreemption) -> None:
        plugin.ordered_score_funcs = lambda _: [lambda name: float(name[-1])]  # type: ignore[method-assign,assignment]  # a scoring that prefers the last node
    table, plain = _table_and_plain(four, pod("x", 100, "2"), {"percentage": 100, "absolute": 1}, prefer_the_last)
    assert table == plain and table[3] == "node3"
