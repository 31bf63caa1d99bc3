"""`berth events --pod`: the events that concern one pod."""

from __future__ import annotations

import pytest

from berth.client import CliError
from berth.pod_mentions import PodMentions, parse_pod
from shared.events import (
    BindRequested,
    NodeUpserted,
    PodSubmitted,
    PreemptionDecided,
    SchedulingAttempted,
    envelope,
)
from shared.model import Node, ObjectMeta, Pod


def _submitted(name: str, uid: str, namespace: str = "") -> PodSubmitted:
    return PodSubmitted(pod=Pod(metadata=ObjectMeta(name=name, namespace=namespace, uid=uid)))


def _attempted(uid: str) -> SchedulingAttempted:
    return SchedulingAttempted(pod_uid=uid, attempt=1, profile="default-scheduler", node_name="n1", message=None,
                               seed=1, config_hash="h")


def test_a_pods_events_are_known_by_the_uid_its_submission_gave() -> None:
    mine = PodMentions("default", "web")
    assert not mine.concerns(envelope(_attempted("u1"), producer="t")), "its uid is not known yet"
    assert mine.concerns(envelope(_submitted("web", "u1"), producer="t"))
    assert not mine.concerns(envelope(_submitted("web", "u9", namespace="other"), producer="t"))
    assert mine.concerns(envelope(_attempted("u1"), producer="t"))
    assert not mine.concerns(envelope(_attempted("u2"), producer="t"))
    bind = BindRequested(pod_uid="u1", pod=Pod(metadata=ObjectMeta(name="web", uid="u1")), node_name="n1",
                         attempt_id="a", seed=1)
    assert mine.concerns(envelope(bind, producer="t")), "named in the payload, keyed by node"
    assert not mine.concerns(envelope(NodeUpserted(node=Node(metadata=ObjectMeta(name="n1"))), producer="t"))
    mine.learn(envelope(_submitted("web", "u3"), producer="t"))  # deleted and created again
    assert mine.uids == {"u1", "u3"}


def test_a_pod_is_named_as_kubectl_names_it() -> None:
    assert parse_pod("web", None) == ("default", "web")
    assert parse_pod("web", "team") == ("team", "web")
    assert parse_pod("team/web", None) == ("team", "web") == parse_pod("team/web", "team")
    for bad in ("team/", "/web", "", "a/b/web", "team//web"):
        with pytest.raises(CliError, match="expected NAME or NAMESPACE/NAME"):
            parse_pod(bad, None)
    with pytest.raises(CliError, match="names namespace 'team', -n 'prod'"):
        parse_pod("team/web", "prod")


def test_an_empty_uid_names_nothing_and_keys_name_too() -> None:
    mine = PodMentions("default", "web")
    mine.learn(envelope(_submitted("web", ""), producer="t"))
    assert mine.uids == set() and not mine.concerns(envelope(_attempted(""), producer="t"))
    mine.learn(envelope(_submitted("web", "u1"), producer="t"))
    nominating = PreemptionDecided(preemptor_uid="other", nominated_node="n2", nominating={"u1": "n1"})
    assert mine.concerns(envelope(nominating, producer="t")), "named as a key"
