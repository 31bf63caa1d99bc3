"""Packed shard answers: runs of positions and of equal scores say exactly what the names and
columns said, and a worker's walk over consecutive nodes packs into a handful of integers."""

from __future__ import annotations

import msgspec
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from shared.events import NodeFailure, PodShardResult
from shared.framework.cycle_state import CycleState
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot
from shared.indexes.node_index import NodeIndexes
from shared.model.loader import ClusterInput, load_objects
from shared.profiles import build_profiles
from shared.protocol.answers import decode_walk
from shared.protocol.packed_failures import pack_failures
from shared.protocol.packing import column_of, columns_run_lengths, pack, run_lengths, runs
from shared.protocol.sharded import MergedFilter, filter_on_shard, merge_filter
from shared.scheduler.fit_error import FitError
from tests.wire_names import names_at, unpack

NAMES = [f"n{i}" for i in range(64)]


def _walk_order(at: list[int], start: int) -> list[int]:
    """Positions as a round-robin walk from `start` meets them."""
    ordered = sorted(at)
    return [i for i in ordered if i >= start] + [i for i in ordered if i < start]


@given(st.lists(st.integers(0, 63), unique=True), st.integers(0, 63))
def test_runs_name_the_same_nodes_in_the_same_order(at: list[int], start: int) -> None:
    at = _walk_order(at, start)
    packed = runs(np.asarray(at, dtype=np.intp))
    assert names_at(NAMES, packed) == [NAMES[i] for i in at]
    assert len(packed) <= 2 * len(at)


@given(st.lists(st.integers(-(2**62), 2**62)))
def test_run_lengths_give_the_column_back(column: list[int]) -> None:
    packed = run_lengths(np.asarray(column, dtype=np.int64))
    assert column_of(packed).tolist() == column


@given(st.lists(st.lists(st.integers(0, 2), min_size=5, max_size=5), min_size=1, max_size=4))
def test_columns_are_packed_alike_one_by_one_or_together(rows: list[list[int]]) -> None:
    columns = {f"P{k}": np.asarray(r, dtype=np.int64) for k, r in enumerate(rows)}
    assert columns_run_lengths(columns) == {p: run_lengths(c) for p, c in columns.items()}


def test_a_walk_that_wraps_around_is_two_runs() -> None:
    assert runs(np.array([61, 62, 63, 0, 1], dtype=np.intp)) == [61, 3, 0, 2]
    assert run_lengths(np.array([95] * 500 + [93] * 2, dtype=np.int64)) == [95, 500, 93, 2]


@given(feasible=st.lists(st.integers(0, 63), unique=True),
       scores=st.lists(st.integers(0, 3), min_size=64, max_size=64),
       failed=st.lists(st.integers(0, 63), unique=True), start=st.integers(0, 63))
def test_pack_then_unpack_is_the_answer(feasible: list[int], scores: list[int], failed: list[int],
                                        start: int) -> None:
    feasible, failed = _walk_order(feasible, start), _walk_order(failed, start)
    result = PodShardResult(
        pod_uid="u", feasible=[NAMES[i] for i in feasible], scored=True,
        scores={"A": [scores[i] for i in feasible], "B": [0] * len(feasible)},
        failures=[NodeFailure(code="Unschedulable", reasons=["Insufficient cpu"], plugin="NodeResourcesFit",
                              nodes=[NAMES[i] for i in failed])] if failed else [])
    position = {name: i for i, name in enumerate(NAMES)}
    packed = pack(result, position)
    wire = msgspec.msgpack.decode(msgspec.msgpack.encode(packed), type=PodShardResult)
    assert unpack(wire, NAMES) == result
    walk = decode_walk(wire).named(NAMES)  # the queue's way: decoded once, where it arrives
    assert walk.feasible == result.feasible and {p: c.tolist() for p, c in walk.columns.items()} == result.scores
    decoded = [(list(f.status.reasons), f.at.tolist() if f.at is not None else None)
               for f in decode_walk(wire).failures]
    assert decoded == [(f.reasons, [NAMES.index(n) for n in f.nodes]) for f in result.failures]
    assert unpack(result, NAMES) is result  # an answer with names is left alone


def _cluster(nodes: int, pods: int) -> tuple[ClusterInput, Snapshot]:
    docs: list[dict] = [{"kind": "Node", "metadata": {"name": f"node-{i}"},
                         "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}
                        for i in range(nodes)]
    docs += [{"kind": "Pod", "metadata": {"name": f"p{i}", "uid": f"u{i}"},
              "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}
             for i, cpu in enumerate(["100m"] * (pods - 1) + ["3950m"])]
    cluster = load_objects(("generated", d) for d in docs)
    return cluster, Snapshot([NodeInfo(n) for n in cluster.nodes])


def test_an_indexed_walk_packs_into_runs_and_unpacks_to_the_plain_answer() -> None:
    cluster, snapshot = _cluster(nodes=1000, pods=2)
    fwk = next(iter(build_profiles(cluster.config).values()))
    fwk.set_snapshot(snapshot)
    every = set(snapshot.names)
    # Fill node-3 so that the last pod (3.95 CPUs) fails there: a failure among the feasible run.
    snapshot.node_info_map["node-3"].add_pod(PodInfo(msgspec.structs.replace(
        cluster.pods[0], spec=msgspec.structs.replace(cluster.pods[0].spec, node_name="node-3"))))
    pod = PodInfo(cluster.pods[-1])
    plain = filter_on_shard(fwk, CycleState(), pod, snapshot, 990, every, NodeIndexes())
    packed = filter_on_shard(fwk, CycleState(), pod, snapshot, 990, every, NodeIndexes(), packed=True)
    assert packed.feasible == [] and packed.failures[0].nodes == []
    # 990..999, then 0..2 and 4..: three runs; node-3's failure one run.
    assert packed.feasible_at[:2] == [990, 10] and len(packed.feasible_at) == 6
    assert packed.failures[0].at == [3, 1]
    assert all(len(c) == 2 for c in packed.score_runs.values())  # empty nodes all score alike
    assert unpack(packed, snapshot.names) == plain
    assert len(msgspec.msgpack.encode(packed)) * 20 < len(msgspec.msgpack.encode(plain))


def test_one_answer_for_every_node_is_its_own_merge() -> None:
    """The queue's shortcut for a pod whose one result covers every node (one filter worker) and
    rejected none gives the merge the node-by-node walk gives."""
    cluster, snapshot = _cluster(nodes=1000, pods=2)
    fwk = next(iter(build_profiles(cluster.config).values()))
    fwk.set_snapshot(snapshot)
    every = set(snapshot.names)
    pod = PodInfo(cluster.pods[-1])
    for start in (0, 990):
        result = filter_on_shard(fwk, CycleState(), pod, snapshot, start, every, NodeIndexes())
        assert not result.failures
        walk = decode_walk(result)
        fast, walked = (merge_filter(fwk, pod, snapshot, start, [walk], on_snapshot=w) for w in (True, False))
        assert (fast.feasible, fast.processed, fast.advance) == (walked.feasible, walked.processed, walked.advance)
        assert len(fast.feasible) == 420 and not fast.diagnosis.node_to_status


def test_one_answer_for_every_node_with_rejections_is_its_own_merge() -> None:
    """The same shortcut where the walk rejected nodes (a preemptor's attempt rejects every node):
    the rejections, read as arrays over the view, give the merge, the message and the packed
    request the node-by-node walk gives."""
    cluster, snapshot = _cluster(nodes=300, pods=2)
    fwk = next(iter(build_profiles(cluster.config).values()))
    fwk.set_snapshot(snapshot)
    every = set(snapshot.names)
    pod = PodInfo(cluster.pods[-1])  # 3.95 CPUs: fails where a 100m pod runs
    small = cluster.pods[0]
    for every_kth in (3, 1):  # some nodes full, then every node
        for i in range(0, 300, every_kth):
            name = f"node-{i}"
            if not snapshot.node_info_map[name].pods:
                snapshot.node_info_map[name].add_pod(PodInfo(msgspec.structs.replace(
                    small, metadata=msgspec.structs.replace(small.metadata, uid=f"s{i}", name=f"s{i}"),
                    spec=msgspec.structs.replace(small.spec, node_name=name))))
        for start in (0, 250):
            packed = filter_on_shard(fwk, CycleState(), pod, snapshot, start, every, NodeIndexes(), packed=True)
            assert packed.failures and all(f.at and not f.nodes for f in packed.failures)
            kept = decode_walk(packed).named(snapshot.names)  # the queue's way for such a pod
            fast = merge_filter(fwk, pod, snapshot, start, [kept], on_snapshot=True)
            named = decode_walk(unpack(packed, snapshot.names))
            walked = merge_filter(fwk, pod, snapshot, start, [named], on_snapshot=False)
            assert (fast.feasible, fast.processed, fast.advance) == (walked.feasible, walked.processed, walked.advance)
            fast_d, walked_d = fast.diagnosis, walked.diagnosis
            assert fast_d.node_to_status.position_groups(snapshot.names) is not None  # kept as arrays
            assert fast_d.unschedulable_plugins == walked_d.unschedulable_plugins == {"NodeResourcesFit"}
            assert pack_failures(fast_d.node_to_status, snapshot) == pack_failures(walked_d.node_to_status, snapshot)
            assert FitError("default/p", 300, fast_d).message() == FitError("default/p", 300, walked_d).message()
            assert dict(fast_d.node_to_status.items()) == dict(walked_d.node_to_status.items())
            assert list(fast_d.node_to_status) == list(walked_d.node_to_status)  # in walk order too


def test_packed_answers_of_several_shards_that_found_no_node_merge_as_arrays() -> None:
    """A filter worker that answered its shards in two answers (two results per pod), each made on
    the queue's view, for a pod no node fits (a preemptor's first attempt): the rejections merge
    as arrays, with the merge, message and packed request of the node-by-node walk; a pod some
    shard found a node for still merges node by node."""
    cluster, snapshot = _cluster(nodes=300, pods=2)
    fwk = next(iter(build_profiles(cluster.config).values()))
    fwk.set_snapshot(snapshot)
    halves = [set(snapshot.names[:150]), set(snapshot.names[150:])]
    pod = PodInfo(cluster.pods[-1])  # 3.95 CPUs: fails where a 100m pod runs
    small = cluster.pods[0]
    for i in range(0, 300, 2):  # every other node full: both halves find nodes
        snapshot.node_info_map[f"node-{i}"].add_pod(PodInfo(msgspec.structs.replace(
            small, metadata=msgspec.structs.replace(small.metadata, uid=f"s{i}", name=f"s{i}"),
            spec=msgspec.structs.replace(small.spec, node_name=f"node-{i}"))))

    def merges(start: int) -> tuple[MergedFilter, MergedFilter]:
        answers = [filter_on_shard(fwk, CycleState(), pod, snapshot, start, half, NodeIndexes(), packed=True)
                   for half in halves]
        kept = [decode_walk(a).named(snapshot.names) for a in answers]
        fast = merge_filter(fwk, pod, snapshot, start, kept, on_snapshot=True)
        walked = merge_filter(fwk, pod, snapshot, start, [decode_walk(unpack(a, snapshot.names)) for a in answers])
        assert (fast.feasible, fast.processed, fast.advance) == (walked.feasible, walked.processed, walked.advance)
        return fast, walked

    fast, walked = merges(250)
    assert fast.feasible  # some shard found nodes: merged node by node
    assert dict(fast.diagnosis.node_to_status.items()) == dict(walked.diagnosis.node_to_status.items())
    for i in range(1, 300, 2):  # now every node is full
        snapshot.node_info_map[f"node-{i}"].add_pod(PodInfo(msgspec.structs.replace(
            small, metadata=msgspec.structs.replace(small.metadata, uid=f"s{i}", name=f"s{i}"),
            spec=msgspec.structs.replace(small.spec, node_name=f"node-{i}"))))
    overlapping = [set(snapshot.names[:160]), set(snapshot.names[140:])]  # a resent request's answer
    answers = [filter_on_shard(fwk, CycleState(), pod, snapshot, 0, part, NodeIndexes(), packed=True)
               for part in overlapping]
    kept = [decode_walk(a).named(snapshot.names) for a in answers]
    merged = merge_filter(fwk, pod, snapshot, 0, kept, on_snapshot=True)
    assert merged.processed == 300 and len(merged.diagnosis.node_to_status) == 300  # each node once
    for start in (0, 250):
        fast, walked = merges(start)
        fast_d, walked_d = fast.diagnosis, walked.diagnosis
        assert not fast.feasible and fast.processed == 300
        assert fast_d.node_to_status.position_groups(snapshot.names) is not None  # kept as arrays
        assert fast_d.unschedulable_plugins == walked_d.unschedulable_plugins == {"NodeResourcesFit"}
        assert pack_failures(fast_d.node_to_status, snapshot) == pack_failures(walked_d.node_to_status, snapshot)
        assert FitError("default/p", 300, fast_d).message() == FitError("default/p", 300, walked_d).message()
        assert list(fast_d.node_to_status) == list(walked_d.node_to_status)  # in walk order too
        assert dict(fast_d.node_to_status.items()) == dict(walked_d.node_to_status.items())


def test_rejections_left_packed_are_read_by_name_where_the_merge_walks_node_by_node() -> None:
    """A whole answer whose rejections the queue left packed, for a pod the shortcut does not take
    (a nominated node, or a PreFilter node subset): the node-by-node merge reads them by name."""
    cluster, snapshot = _cluster(nodes=50, pods=2)
    fwk = next(iter(build_profiles(cluster.config).values()))
    fwk.set_snapshot(snapshot)
    every = set(snapshot.names)
    small = cluster.pods[0]
    for i in range(50):  # every node runs a 100m pod: the 3.95 CPU pod fits nowhere
        name = f"node-{i}"
        snapshot.node_info_map[name].add_pod(PodInfo(msgspec.structs.replace(
            small, metadata=msgspec.structs.replace(small.metadata, uid=f"s{i}", name=f"s{i}"),
            spec=msgspec.structs.replace(small.spec, node_name=name))))
    big = cluster.pods[-1]
    nominated = msgspec.structs.replace(big, status=msgspec.structs.replace(big.status, nominated_node_name="node-7"))
    fields = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-3", "node-4", "node-5"]}]}]}}
    subset = load_objects([("subset", {"kind": "Pod", "metadata": {"name": "q", "uid": "uq"}, "spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "3950m"}}}],
        "affinity": {"nodeAffinity": fields}}})]).pods[0]
    for spec in (nominated, subset):
        pod = PodInfo(spec)
        packed = filter_on_shard(fwk, CycleState(), pod, snapshot, 10, every, NodeIndexes(), packed=True)
        assert any(f.at for f in packed.failures)
        kept = decode_walk(packed).named(snapshot.names)
        fast = merge_filter(fwk, pod, snapshot, 10, [kept], on_snapshot=True)
        walked = merge_filter(fwk, pod, snapshot, 10, [decode_walk(unpack(packed, snapshot.names))], on_snapshot=False)
        assert (fast.feasible, fast.processed) == (walked.feasible, walked.processed)
        assert fast.processed in (50, 3)
        assert (FitError("default/p", 50, fast.diagnosis).message()
                == FitError("default/p", 50, walked.diagnosis).message())
        assert dict(fast.diagnosis.node_to_status.items()) == dict(walked.diagnosis.node_to_status.items())


def test_a_shard_stops_at_a_nominated_node_that_passes() -> None:
    """As upstream's evaluateNominatedNode: the merge takes a nominated node that passes and reads
    nothing else, so the shard walks no further; a nominated node that fails is walked past."""
    cluster, snapshot = _cluster(nodes=50, pods=2)
    fwk = next(iter(build_profiles(cluster.config).values()))
    fwk.set_snapshot(snapshot)
    every = set(snapshot.names)
    small = cluster.pods[0]
    for i in range(50):  # every node but node-7 runs a 100m pod: the 3.95 CPU pod fits node-7 only
        if i != 7:
            name = f"node-{i}"
            snapshot.node_info_map[name].add_pod(PodInfo(msgspec.structs.replace(
                small, metadata=msgspec.structs.replace(small.metadata, uid=f"s{i}", name=f"s{i}"),
                spec=msgspec.structs.replace(small.spec, node_name=name))))
    big = cluster.pods[-1]
    for node, walked in (("node-7", False), ("node-3", True)):
        spec = msgspec.structs.replace(big, status=msgspec.structs.replace(big.status, nominated_node_name=node))
        pod = PodInfo(spec)
        answer = filter_on_shard(fwk, CycleState(), pod, snapshot, 10, every, NodeIndexes(), stop_at_nominated=True)
        merged = merge_filter(fwk, pod, snapshot, 10, [decode_walk(answer)])
        assert merged.feasible == ["node-7"]
        # Off the queue's view a shard walks on: the queue reads the walk where it lacks the node.
        walk = filter_on_shard(fwk, CycleState(), pod, snapshot, 10, every, NodeIndexes())
        assert walk.feasible == ["node-7"] and len(walk.failures[0].nodes) == 49
        if walked:
            assert answer.nominated is not None and len(answer.failures[0].nodes) == 49
            assert merged.processed == 50 and merged.advance
        else:
            assert answer.feasible == ["node-7"] and answer.failures == [] and answer.nominated is None
            assert merged.processed == 0 and not merged.advance
