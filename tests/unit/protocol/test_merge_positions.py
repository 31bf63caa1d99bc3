"""The array merge of packed shard answers gives the node-by-node merge's verdict, processed count,
diagnosis and raw scores, for any number of answers, and leaves what it does not cover to it."""

from __future__ import annotations

import msgspec
import pytest

from shared.events import PodShardResult
from shared.framework.cycle_state import CycleState
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot
from shared.indexes.node_index import NodeIndexes
from shared.model.loader import ClusterInput, load_objects
from shared.profiles import build_profiles
from shared.protocol.answers import decode_walk
from shared.protocol.merge_batch import merge_batch
from shared.protocol.merge_positions import merge_packed, mergeable
from shared.protocol.raw_scores import RawScores
from shared.protocol.sharded import filter_on_shard, merge_filter, raw_by_plugin
from shared.scheduler.fit_error import FitError
from tests.wire_names import unpack


def _cluster(nodes: int) -> tuple[ClusterInput, Snapshot]:
    docs: list[dict] = [{"kind": "Node", "metadata": {"name": f"node-{i}", "labels": {"zone": f"z{i % 3}"}},
                         "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}
                        for i in range(nodes)]
    docs += [{"kind": "Pod", "metadata": {"name": f"p{i}", "uid": f"u{i}"},
              "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}
             for i, cpu in enumerate(["100m", "3950m"])]
    cluster = load_objects(("generated", d) for d in docs)
    return cluster, Snapshot([NodeInfo(n) for n in cluster.nodes])


def _fill(cluster: ClusterInput, snapshot: Snapshot, every: int, offset: int = 0) -> None:
    small = cluster.pods[0]
    for i in range(offset, snapshot.num_nodes(), every):
        snapshot.node_info_map[f"node-{i}"].add_pod(PodInfo(msgspec.structs.replace(
            small, metadata=msgspec.structs.replace(small.metadata, uid=f"s{i}", name=f"s{i}"),
            spec=msgspec.structs.replace(small.spec, node_name=f"node-{i}"))))


def _wire(result: PodShardResult) -> PodShardResult:
    return msgspec.msgpack.decode(msgspec.msgpack.encode(result), type=PodShardResult)


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
@pytest.mark.parametrize("start", [0, 137, 399])
@pytest.mark.parametrize("pod_index", [0, 1], ids=["fits-many", "fits-few"])
def test_array_merge_equals_the_walk_by_name(workers: int, start: int, pod_index: int) -> None:
    """400 nodes (the walk wants 200 feasible ones), every seventh full: the 100m pod passes
    most nodes, the 3.95-CPU pod only the empty ones; answers split across workers by node."""
    cluster, snapshot = _cluster(400)
    _fill(cluster, snapshot, every=7, offset=3)
    fwk = next(iter(build_profiles(cluster.config).values()))
    fwk.set_snapshot(snapshot)
    pod = PodInfo(cluster.pods[pod_index])
    parts = [set(snapshot.names[k::workers]) for k in range(workers)]
    results = [_wire(filter_on_shard(fwk, CycleState(), pod, snapshot, start, part, NodeIndexes(), packed=True))
               for part in parts]
    answers = [decode_walk(r) for r in results]
    assert mergeable(answers, "")
    fast = merge_packed(fwk, snapshot, start, answers)
    assert fast is not None
    named = [decode_walk(unpack(r, snapshot.names)) for r in results]
    walked = merge_filter(fwk, pod, snapshot, start, named)
    merged = fast.merged()
    assert (merged.feasible, merged.processed) == (walked.feasible, walked.processed)
    assert dict(merged.diagnosis.node_to_status.items()) == dict(walked.diagnosis.node_to_status.items())
    assert merged.diagnosis.unschedulable_plugins == walked.diagnosis.unschedulable_plugins
    raw, error = raw_by_plugin(named)
    assert not error and fast.raw is not None
    by_name = RawScores.of_mapping(raw)
    for plugin in by_name:
        assert dict(fast.raw[plugin]) == {n: by_name[plugin][n] for n in merged.feasible}


def test_no_node_fits_merges_into_the_same_fit_error() -> None:
    cluster, snapshot = _cluster(300)
    _fill(cluster, snapshot, every=1)
    fwk = next(iter(build_profiles(cluster.config).values()))
    fwk.set_snapshot(snapshot)
    pod = PodInfo(cluster.pods[1])
    parts = [set(snapshot.names[k::3]) for k in range(3)]
    results = [_wire(filter_on_shard(fwk, CycleState(), pod, snapshot, 40, p, NodeIndexes(), packed=True))
               for p in parts]
    fast = merge_packed(fwk, snapshot, 40, [decode_walk(r) for r in results])
    assert fast is not None and not fast.feasible and fast.processed == 300
    walked = merge_filter(fwk, pod, snapshot, 40, [decode_walk(unpack(r, snapshot.names)) for r in results])
    fit, by_name = FitError("default/p1", 300, fast.merged().diagnosis), FitError("default/p1", 300, walked.diagnosis)
    assert fit.message() == by_name.message()


def test_each_pod_gets_its_own_diagnosis_from_a_shared_merge() -> None:
    """Identical pods share their answers and so one merge; a FitError's diagnosis is completed
    per pod (preemption's message), so each pod's must be its own."""
    cluster, snapshot = _cluster(120)
    _fill(cluster, snapshot, every=1)
    fwk = next(iter(build_profiles(cluster.config).values()))
    fwk.set_snapshot(snapshot)
    pod = PodInfo(cluster.pods[1])
    answer = decode_walk(_wire(filter_on_shard(fwk, CycleState(), pod, snapshot, 0, set(snapshot.names),
                                               NodeIndexes(), packed=True)))
    other = PodInfo(msgspec.structs.replace(pod.pod, metadata=msgspec.structs.replace(pod.pod.metadata, uid="u9")))
    batch = merge_batch([(fwk, pod), (fwk, other)], {pod.uid: [answer], other.uid: [answer]}, snapshot, 0)
    first, second = batch.merged
    assert first.diagnosis is not second.diagnosis
    first.diagnosis.post_filter_msg = "preemption: …"
    assert second.diagnosis.post_filter_msg != first.diagnosis.post_filter_msg


def test_what_the_array_merge_does_not_cover() -> None:
    cluster, snapshot = _cluster(120)
    fwk = next(iter(build_profiles(cluster.config).values()))
    fwk.set_snapshot(snapshot)
    pod = PodInfo(cluster.pods[0])
    halves = [set(snapshot.names[:70]), set(snapshot.names[50:])]  # a resent request answered twice
    answers = [decode_walk(_wire(filter_on_shard(fwk, CycleState(), pod, snapshot, 0, h, NodeIndexes(), packed=True)))
               for h in halves]
    assert merge_packed(fwk, snapshot, 0, answers) is None
    named = decode_walk(filter_on_shard(fwk, CycleState(), pod, snapshot, 0, set(snapshot.names), NodeIndexes()))
    assert not mergeable([named], "")  # names: made on another view
    assert not mergeable(answers, "node-3")  # a nominated pod: the merge reads its node first
    assert not mergeable([decode_walk(PodShardResult(pod_uid="u0", error="boom"))], "")
