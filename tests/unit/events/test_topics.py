"""The topic registry: prefixes, partition counts, keys and event routing."""

from __future__ import annotations

import pytest

from shared.errors import DecodeError
from shared.events import (
    FILTER_REQUESTS,
    NODE_PARTITIONS,
    NODE_SHARDS,
    NODES,
    PLACEMENTS,
    PODS,
    PREEMPTION,
    PREEMPTION_REQUESTS,
    BindRequested,
    PodBound,
    PodSubmitted,
    PreemptionRequested,
    SchedulingAttempted,
    TopicRegistry,
    envelope,
)
from shared.events.codec import decode, encode

from .samples import make_pod, sample_payloads


def test_physical_names_carry_the_prefix() -> None:
    reg = TopicRegistry("test-1.")
    assert reg.physical("pods") == "test-1.pods"
    assert reg.logical("test-1.pods") == "pods"
    assert len(reg.physical_names()) == 10
    with pytest.raises(KeyError):
        reg.logical("other.pods")
    with pytest.raises(KeyError):
        reg.physical("podz")


def test_node_keyed_topics_are_co_partitioned_and_filter_requests_have_a_copy_per_shard() -> None:
    reg = TopicRegistry()
    for name in (NODES, "binds", PLACEMENTS):
        assert reg.spec(name).partitions == NODE_PARTITIONS
    assert reg.spec(FILTER_REQUESTS).partitions == NODE_SHARDS
    assert reg.spec(FILTER_REQUESTS).broadcast


@pytest.mark.parametrize(
    ("event", "topic"),
    [(PodSubmitted, "pods"), (BindRequested, "binds"), (PodBound, "placements"), (SchedulingAttempted, "decisions")],
)
def test_events_route_to_their_topic(event: type, topic: str) -> None:
    assert TopicRegistry().topic_of(event) == topic


def test_keys_follow_the_plan() -> None:
    keys = {type(p).__name__: p.partition_key() for p in sample_payloads()}
    assert keys["NodeUpserted"] == keys["NodeDeleted"] == "node-a"
    assert keys["PodSubmitted"] == keys["PodDeleted"] == keys["PodNominated"] == "uid-web-0"
    assert keys["BindRequested"] == keys["PodBound"] == keys["BindRejected"] == "node-a"
    assert keys["ShardFiltered"] == keys["FilterBatchRequested"] == "b-1"
    assert keys["SchedulingAttempted"] == keys["PreemptionDecided"] == keys["PreemptionRequested"] == "uid-web-0"


def test_requests_of_an_earlier_release_on_preemption_are_read_but_never_routed_there() -> None:
    request = PreemptionRequested(pod=make_pod(uid="uid-p"), attempt_id="uid-p/1")
    assert TopicRegistry().topic_of(request) == PREEMPTION_REQUESTS
    env = envelope(request, producer="queue")
    assert decode(encode(env), topic=PREEMPTION).payload == request  # an older log
    with pytest.raises(DecodeError):
        decode(encode(env), topic=PODS)
