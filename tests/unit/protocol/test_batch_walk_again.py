"""A pod of a batch whose every ranked candidate was taken by the pods decided before it walks again
on the view as it is, when the caller allows it, and lands where the in-process scheduler would."""

from __future__ import annotations

import random
from typing import Any

from shared.cluster.view import bound_copy
from shared.framework.cycle_state import CycleState
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.model.loader import load_objects
from shared.profiles import build_profiles
from shared.protocol.batch import BatchItem, Decision, decide_batch
from shared.protocol.sharded import MergedFilter
from shared.replay.diff import weighted_difference
from shared.scheduler.schedule_one import ScheduleAlgorithm
from tests.builders import MakeNode, MakePod

SEED, START = 7, 2


def _cluster(nodes: int, pods: int) -> tuple[Framework, Snapshot, list[PodInfo]]:
    """`nodes` nodes with room for one pod each, and `pods` pods that each take a node whole."""
    fwk = build_profiles(None)["default-scheduler"]
    snapshot = Snapshot([MakeNode().name(f"n{i}").capacity(cpu=str(1 + i % 3), memory="16Gi", pods="1").info()
                         for i in range(nodes)])
    fwk.set_snapshot(snapshot)
    infos = [MakePod().name(f"p{k}").uid(f"uid-p{k}").req(cpu="1").info() for k in range(pods)]
    return fwk, snapshot, infos


def _decide(fwk: Framework, snapshot: Snapshot, infos: list[PodInfo], **walking: Any) -> list[Decision]:
    # Every pod was evaluated on the empty cluster and saw only n0 and n1 (a narrow shard answer).
    items = [BatchItem(fwk, info, MergedFilter(feasible=["n0", "n1"]), {}, SEED, (), START) for info in infos]
    by_uid = {info.uid: info for info in infos}

    def assume(uid: str, host: str) -> None:
        snapshot.node_info_map[host].add_pod(by_uid[uid].placed(bound_copy(by_uid[uid].pod, host)))

    return decide_batch(items, lambda: snapshot, assume, **walking)


def test_a_pod_whose_candidates_were_taken_walks_again_where_allowed() -> None:
    fwk, snapshot, infos = _cluster(nodes=6, pods=3)
    decisions = _decide(fwk, snapshot, infos, walker=ScheduleAlgorithm(random.Random(0)), may_walk=lambda _: True)
    assert [d.verdict for d in decisions] == ["bind", "bind", "bind"]
    assert [d.walked_again for d in decisions] == [False, False, True]
    first_two = {decisions[0].host, decisions[1].host}
    assert first_two == {"n0", "n1"}
    third = decisions[2].host
    assert third not in first_two and decisions[2].ranked == [third]

    # It is the node the in-process scheduler picks on that view from the same start and seed.
    fwk2, snapshot2, infos2 = _cluster(nodes=6, pods=3)
    for info, d in zip(infos2[:2], decisions[:2]):
        snapshot2.node_info_map[d.host].add_pod(info.placed(bound_copy(info.pod, d.host)))
    walker = ScheduleAlgorithm(random.Random(SEED))
    walker.next_start_node_index = START
    assert walker.schedule_pod(fwk2, CycleState(), infos2[2], snapshot2).suggested_host == third


def test_a_pod_not_allowed_to_walk_or_with_no_room_left_is_retried() -> None:
    fwk, snapshot, infos = _cluster(nodes=6, pods=3)
    asked: list[str] = []

    def refuse(item: BatchItem) -> bool:
        asked.append(item.info.uid)
        return False

    refused = _decide(fwk, snapshot, infos, walker=ScheduleAlgorithm(random.Random(0)), may_walk=refuse)
    assert [d.verdict for d in refused] == ["bind", "bind", "retry"]
    assert asked == ["uid-p2"]  # asked only for the pod whose candidates were taken
    assert not any(d.walked_again for d in refused)

    fwk, snapshot, infos = _cluster(nodes=6, pods=3)
    assert [d.verdict for d in _decide(fwk, snapshot, infos)] == ["bind", "bind", "retry"]  # no walker

    fwk, snapshot, infos = _cluster(nodes=2, pods=3)
    full = _decide(fwk, snapshot, infos, walker=ScheduleAlgorithm(random.Random(0)), may_walk=lambda _: True)
    assert [d.verdict for d in full] == ["bind", "bind", "retry"]  # the walk finds no node either
    assert full[2].walked_again


BALANCE_WEIGHS_40 = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [
        {"name": "NodeResourcesBalancedAllocation", "weight": 40}]}}}],
}


def _walk_third(config: object, *, record: bool) -> list[Decision]:
    """Two one-pod nodes every pod saw, taken by the first two; the third walks to `roomy` (most room,
    least balanced after the pod: NodeResourcesFit's pick) or `even` (cpu and memory used alike:
    NodeResourcesBalancedAllocation's)."""
    fwk = build_profiles(config)["default-scheduler"]  # type: ignore[arg-type]  # a parsed config
    snapshot = Snapshot([MakeNode().name("n0").capacity(cpu="1", memory="2Gi", pods="1").info(),
                         MakeNode().name("n1").capacity(cpu="1", memory="2Gi", pods="1").info(),
                         MakeNode().name("roomy").capacity(cpu="32", memory="6Gi", pods="110").info(),
                         MakeNode().name("even").capacity(cpu="2", memory="4Gi", pods="110").info()])
    fwk.set_snapshot(snapshot)
    infos = [MakePod().name(f"p{k}").uid(f"uid-p{k}").req(cpu="1", memory="2Gi").info() for k in range(3)]
    return _decide(fwk, snapshot, infos, walker=ScheduleAlgorithm(random.Random(0)), may_walk=lambda _: True,
                   record=record)


def test_a_recorded_walk_keeps_its_scores_so_a_what_if_can_name_the_plugin() -> None:
    weighted = load_objects([("weighted.yaml", BALANCE_WEIGHS_40)]).config
    as_run, what_if = _walk_third(None, record=True), _walk_third(weighted, record=True)
    assert [d.host for d in as_run] == [d.host for d in _walk_third(None, record=False)]  # recording changes no pick
    assert (as_run[2].host, what_if[2].host) == ("roomy", "even")
    assert as_run[2].ranked == ["roomy"] and {s.name for s in as_run[2].scores} == {"roomy", "even"}
    plugin, detail = weighted_difference(as_run[2].scores, what_if[2].scores, ["roomy", "even"])
    assert plugin == "NodeResourcesBalancedAllocation" and detail.startswith("weighted score on roomy: ")
    assert _walk_third(None, record=False)[2].scores == []  # the queue, which does not record, keeps none
