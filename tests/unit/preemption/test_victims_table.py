"""The dry-run table's scan: the nodes a sequential scan from the offset would reach, each dry-run
once until its node or its nominations change, and the pod's own nominated node always afresh."""

from __future__ import annotations

import numpy as np

from shared.framework.node_info import NodeInfo
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.preemption import Candidate, Victims
from shared.preemption.victims_table import Answer, VictimsTable, first_greatest
from shared.queue import Nominator
from tests.builders import MakeNode, MakePod

NO_VICTIMS = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "No preemption victims found for incoming pod")


def _nodes(count: int) -> list[NodeInfo]:
    return [MakeNode().name(f"n{i}").capacity(cpu="4").info(MakePod().name(f"low{i}").node(f"n{i}").info())
            for i in range(count)]


class _DryRuns:
    """Answers by node name: a candidate evicting the node's pods, or no victims where told."""

    def __init__(self, refusing: set[str]) -> None:
        self.refusing = refusing
        self.asked: list[str] = []

    def __call__(self, info: NodeInfo) -> Answer:
        self.asked.append(info.name)
        if info.name in self.refusing:
            return Candidate(info.name, Victims([])), NO_VICTIMS
        return Candidate(info.name, Victims(list(info.pods))), None


def _sequential(names: list[str], offset: int, wanted: int, refusing: set[str]) -> tuple[list[str], list[str]]:
    """The plain scan: candidates and the other scanned nodes, in scan order."""
    found: list[str] = []
    others: list[str] = []
    for name in names[offset:] + names[:offset]:
        if name in refusing:
            others.append(name)
            continue
        found.append(name)
        if len(found) >= wanted:
            break
    return found, others


def test_the_scan_stops_where_the_sequential_one_does_and_reuses_answers() -> None:
    nodes = _nodes(8)
    table, nominator = VictimsTable(Snapshot(nodes)), Nominator()
    table.catch_up(nominator)
    positions = np.array([0, 1, 2, 4, 5, 6, 7], dtype=np.intp)  # n3 was not helpable
    names = [f"n{i}" for i in positions.tolist()]
    refusing = {"n5", "n6", "n0"}
    dry_run = _DryRuns(refusing)
    for offset, wanted in [(3, 2), (5, 3), (0, 10), (6, 1)]:
        run = table.scan(positions, offset, wanted, None, dry_run)
        found, others = _sequential(names, offset, wanted, refusing)
        assert [c.name for c in run.candidates] == found
        assert [info.name for info, _ in run.others] == others
        assert all(answer[1] is NO_VICTIMS for _, answer in run.others)
    assert sorted(dry_run.asked) == sorted(names)  # each node dry-run once over the four scans


def test_a_scan_that_needs_more_than_its_first_window_reads_on_around_the_order() -> None:
    """The scan reads the table for the first nodes of its order only, and further when candidates
    are sparse there: wherever the offset (wrapping around the end too), it stops where the
    sequential scan does, and kept answers and the own node are honoured past the first window."""
    import random

    rng = random.Random(7)
    nodes = _nodes(400)
    table, nominator = VictimsTable(Snapshot(nodes)), Nominator()
    table.catch_up(nominator)
    positions = np.array(sorted(rng.sample(range(400), 350)), dtype=np.intp)
    names = [f"n{i}" for i in positions.tolist()]
    refusing = {name for name in names if rng.random() < 0.9}  # about one candidate in ten
    dry_run = _DryRuns(refusing)
    owns: set[str] = set()
    for offset, wanted in [(340, 12), (0, 30), (200, 5), (349, 40), (10, 400)]:
        own = names[(offset + 150) % len(names)]
        owns.add(own)
        asked_before = len(dry_run.asked)
        run = table.scan(positions, offset, wanted, own, dry_run)
        found, others = _sequential(names, offset, wanted, refusing)
        assert [c.name for c in run.candidates] == found
        assert [info.name for info, _ in run.others] == others
        scanned = set(found) | set(others)
        assert (own in dry_run.asked[asked_before:]) == (own in scanned)  # the own node asked afresh
    again = {name for i, name in enumerate(dry_run.asked) if name in dry_run.asked[:i]}
    assert again and again <= owns  # each node dry-run once, but for a pod's own node
    past_the_end = table.scan(positions, 350 + 340, 12, None, dry_run)  # taken modulo the positions
    assert [c.name for c in past_the_end.candidates] == _sequential(names, 340, 12, refusing)[0]


def test_a_changed_node_or_nomination_is_asked_again_and_the_own_node_always() -> None:
    nodes = _nodes(4)
    table, nominator = VictimsTable(Snapshot(nodes)), Nominator()
    positions = np.arange(4, dtype=np.intp)
    dry_run = _DryRuns(set())
    table.catch_up(nominator)
    table.scan(positions, 0, 4, None, dry_run)
    assert dry_run.asked == ["n0", "n1", "n2", "n3"]

    nodes[1].remove_pod(nodes[1].pods[0])
    nominator.add_nominated_pod(MakePod().name("waiting").info(), "n2")
    table.catch_up(nominator)
    run = table.scan(positions, 0, 4, "n3", dry_run)
    assert dry_run.asked[4:] == ["n1", "n2", "n3"]
    assert [c.name for c in run.candidates] == ["n0", "n2", "n3"]  # n1 has no pod left to evict
    assert [c.victims.pods for c in run.candidates][0] == [nodes[0].pods[0]]
    table.catch_up(nominator)
    table.scan(positions, 0, 4, "n3", dry_run)
    assert dry_run.asked[7:] == ["n3"]  # only the pod's own nominated node is asked again


def test_positions_of_a_status_code_from_a_mapping_by_name() -> None:
    table = VictimsTable(Snapshot(_nodes(4)))
    unresolvable = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match Pod's node affinity/selector")
    cpu = Status(Code.UNSCHEDULABLE, "Insufficient cpu")
    statuses = {"n3": cpu, "gone": cpu, "n0": unresolvable, "n1": cpu}
    assert table.positions_with_code(statuses, Code.UNSCHEDULABLE).tolist() == [1, 3]
    assert table.positions_with_code({}, Code.UNSCHEDULABLE).tolist() == []


def test_the_first_greatest_rank_row_is_the_first_of_the_greatest_tuples() -> None:
    rng = np.random.default_rng(3)
    for _ in range(300):
        rows = int(rng.integers(1, 9))
        ranks = rng.integers(-2, 1, size=(rows, 5)).astype(float)
        ranks[rng.random((rows, 5)) < 0.2] = -np.inf
        tuples = [tuple(r) for r in ranks.tolist()]
        assert first_greatest(ranks) == tuples.index(max(tuples))
