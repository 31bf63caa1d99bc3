"""A proposing worker's answers as the queue merges them: a ranking is tried as it is, an error its
ranking failed with after the walk still moves the round-robin start on (as the walk did), and a
failed walk is merged as any walk."""

from __future__ import annotations

from shared.events import PodShardResult
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot
from shared.profiles import build_profiles
from shared.protocol.answers import decode
from shared.protocol.merge_batch import merge_batch
from shared.protocol.proposing import Proposal, as_decided
from shared.protocol.sharded import MergedFilter
from tests.builders import MakeNode, MakePod


def _merged(result: PodShardResult) -> MergedFilter:
    fwk = next(iter(build_profiles(None).values()))
    pod = PodInfo(MakePod().name("p").uid(result.pod_uid).obj())
    snapshot = Snapshot([MakeNode().name("a").info(), MakeNode().name("b").info()])
    return merge_batch([(fwk, pod)], {pod.uid: [decode(result)]}, snapshot, 0).merged[0]


def test_a_ranking_is_tried_as_it_is() -> None:
    m = _merged(PodShardResult(pod_uid="u", ranked=["b", "a"], walked=2))
    assert (m.feasible, m.ranked, m.advance, m.processed, m.error) == (["b", "a"], True, True, 2, "")


def test_an_error_after_the_walk_moves_the_start_on() -> None:
    m = _merged(PodShardResult(pod_uid="u", error="score failed", walked=2))
    assert (m.error, m.advance, m.processed, m.feasible) == ("score failed", True, 2, [])
    walk_error = _merged(PodShardResult(pod_uid="u", error="filter failed"))
    assert (walk_error.error, walk_error.advance) == ("filter failed", False)


def test_replay_decides_a_proposal_by_what_the_queue_merged() -> None:
    info = PodInfo(MakePod().name("p").uid("u").obj())
    walked = MergedFilter(feasible=["a", "b"], processed=2, advance=True)
    failed = Proposal(info, None, PodShardResult(pod_uid="u", error="score failed", walked=2),
                      PodShardResult(pod_uid="u"), walked)
    assert as_decided(failed).error == "score failed" and as_decided(failed).feasible == []
    ranked = Proposal(info, None, PodShardResult(pod_uid="u", ranked=["b"], walked=2), PodShardResult(pod_uid="u"),
                      walked)
    assert as_decided(ranked).feasible == ["b"] and as_decided(ranked).ranked
