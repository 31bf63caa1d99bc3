"""Shard answers decoded at the edge: each result becomes one typed answer, its runs read into
arrays, its statuses `Status` objects, with nothing left for a merge to interpret."""

from __future__ import annotations

import msgspec
import numpy as np

from shared.events import NodeFailure, PodShardResult
from shared.framework.status import Code
from shared.protocol.answers import Decided, Walk, decode, decode_all, failed_by_name, names_of, walks
from shared.protocol.packing import pack

NAMES = [f"n{i}" for i in range(10)]
POSITION = {name: i for i, name in enumerate(NAMES)}
CPU = NodeFailure(code="Unschedulable", reasons=["Insufficient cpu"], plugin="NodeResourcesFit")


def _wire(result: PodShardResult) -> PodShardResult:
    return msgspec.msgpack.decode(msgspec.msgpack.encode(result), type=PodShardResult)


def test_a_decision_is_a_decided_answer() -> None:
    assert decode(PodShardResult(pod_uid="u", ranked=["n2", "n1"], walked=4)) == Decided(["n2", "n1"], 4)
    # A ranking that failed after the walk: the error, and the walk that moved the start on.
    assert decode(PodShardResult(pod_uid="u", error="score failed", walked=4)) == Decided([], 4, "score failed")


def test_a_packed_walk_decodes_to_positions_and_columns() -> None:
    named = PodShardResult(pod_uid="u", feasible=["n8", "n9", "n0", "n2"], scored=True,
                           scores={"A": [5, 5, 5, 7]},
                           failures=[msgspec.structs.replace(CPU, nodes=["n1"])])
    walk = decode(_wire(pack(named, POSITION)))
    assert isinstance(walk, Walk) and walk.on_view and walk.feasible == []
    assert walk.feasible_at is not None and walk.feasible_at.tolist() == [8, 9, 0, 2]
    assert {p: c.tolist() for p, c in walk.columns.items()} == {"A": [5, 5, 5, 7]}
    [failed] = walk.failures
    assert failed.at is not None and failed.at.tolist() == [1] and failed.nodes == []
    assert (failed.status.code, failed.status.reasons, failed.status.plugin) == (
        Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit")
    assert walk.named(NAMES).feasible == named.feasible
    assert failed_by_name(walk.failures, NAMES) == {"n1": failed.status}


def test_a_walk_naming_its_nodes_was_made_on_another_view() -> None:
    walk = decode(PodShardResult(pod_uid="u", feasible=["n3"], failures=[msgspec.structs.replace(CPU, nodes=["n1"])]))
    assert isinstance(walk, Walk) and not walk.on_view and walk.feasible_at is None
    assert walk.named(NAMES) is walk and walk.failures[0].at is None
    # One that names no node at all (an error, a PreFilter rejection) reads on any view.
    nothing = decode(PodShardResult(pod_uid="u", error="boom"))
    assert isinstance(nothing, Walk) and nothing.on_view and nothing.error == "boom"


def test_a_decision_among_other_answers_merges_as_a_walk_that_found_nothing() -> None:
    [decided, walk] = decode_all([PodShardResult(pod_uid="u", error="score failed", walked=2),
                                  PodShardResult(pod_uid="u", feasible=["n1"])])
    as_walks = walks([decided, walk])
    assert as_walks[1] is walk
    assert as_walks[0].error == "score failed" and as_walks[0].on_view and as_walks[0].feasible == []


def test_positions_past_the_view_are_left_out_as_missing_names_are() -> None:
    assert names_of(NAMES[:3], np.array([1, 2, 3, 4], dtype=np.intp)) == ["n1", "n2"]
    assert names_of(NAMES, np.zeros(0, dtype=np.intp)) == []
