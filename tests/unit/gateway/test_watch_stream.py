"""What a watch writes for a run of changes: a deleted pod is never sent again as a new one."""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import make_mocked_request

from services.gateway.watch import Watched, WatchStream


class Collected:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    async def write(self, data: bytes) -> None:
        self.lines.append(json.loads(data))


async def _none(*_: object) -> dict[str, dict[str, Any]]:
    return {}


def _pod(phase: str) -> dict[str, Any]:
    return {"metadata": {"name": "p", "uid": "u"}, "status": {"phase": phase}}


async def test_a_change_read_after_a_pods_deletion_does_not_bring_it_back() -> None:
    watched = Watched("Pod", "v1", {}, lambda kind, payload: "u", _none, _none, lambda uid: {"uid": uid},
                      gone=lambda obj: obj["status"]["phase"] == "Deleted")
    stream = WatchStream(make_mocked_request("GET", "/api/v1/pods?watch=true"), watched, None,  # type: ignore[arg-type]  # no store: nothing is read
                         lambda obj: True)
    out = Collected()
    # Submitted, then deleted; a scheduling attempt stored after the deletion is read last.
    await stream.send(out, [("u", "ADDED", _pod("Pending"), 1), ("u", "DELETED", _pod("Deleted"), 2),  # type: ignore[arg-type]  # rendered pods
                             ("u", "MODIFIED", _pod("Deleted"), 3)])
    assert [(line["type"], line["object"]["metadata"]["resourceVersion"]) for line in out.lines] == [
        ("ADDED", "1"), ("DELETED", "2")]


class CreatedAt:
    """The store as far as a watch asks it when an object was created."""

    def __init__(self, created: dict[str, int]) -> None:
        self.created, self.asked = created, 0

    async def created_at(self, keys: list[str], types: object) -> dict[str, int]:
        self.asked += 1
        return {k: self.created[k] for k in keys if k in self.created}


def _pods_stream(store: CreatedAt) -> WatchStream:
    actions = {"PodSubmitted": "ADDED", "PodBound": "MODIFIED", "SchedulingAttempted": "MODIFIED"}
    watched = Watched("Pod", "v1", actions, lambda kind, payload: payload["uid"], _none, _none,
                      lambda uid: {"uid": uid},
                      at_change=lambda kind, payload: _pod("Pending") if kind == "PodSubmitted" else None)
    return WatchStream(make_mocked_request("GET", "/api/v1/pods?watch=true&resourceVersion=1"), watched,
                       store, lambda obj: True)  # type: ignore[arg-type]  # a stand-in store


async def test_a_bind_stored_before_its_pods_creation_is_sent_after_it() -> None:
    store = CreatedAt({"u": 4})
    stream = _pods_stream(store)
    now = {"u": _pod("Bound")}
    # The bind came in an earlier projector batch than the submission (a fetch stopped short).
    first = await stream.created_first([(2, "PodBound", {"uid": "u"}), (3, "SchedulingAttempted", {"uid": "u"})],
                                        now)
    assert first == []
    second = await stream.created_first([(4, "PodSubmitted", {"uid": "u"})], now)
    assert second == [("u", "ADDED", _pod("Pending"), 4), ("u", "MODIFIED", _pod("Bound"), 4)]
    assert store.asked == 1


async def test_changes_after_a_creation_in_the_same_page_ask_the_store_nothing() -> None:
    store = CreatedAt({"u": 2})
    stream = _pods_stream(store)
    sent = await stream.created_first([(2, "PodSubmitted", {"uid": "u"}), (3, "PodBound", {"uid": "u"})],
                                       {"u": _pod("Bound")})
    assert sent == [("u", "ADDED", _pod("Pending"), 2), ("u", "MODIFIED", _pod("Bound"), 3)]
    assert store.asked == 0


async def test_a_bind_read_while_its_pods_creation_is_not_stored_yet_waits_for_it() -> None:
    store = CreatedAt({})
    stream = _pods_stream(store)
    now = {"u": _pod("Bound")}
    assert await stream.created_first([(2, "PodBound", {"uid": "u"})], now) == []
    store.created["u"] = 3  # the projector's next batch
    sent = await stream.created_first([(3, "PodSubmitted", {"uid": "u"})], now)
    assert sent == [("u", "ADDED", _pod("Pending"), 3), ("u", "MODIFIED", _pod("Bound"), 3)]
    assert store.asked == 1


async def test_a_page_asks_the_store_once_for_every_object_it_has_not_met() -> None:
    store = CreatedAt({"u": 1, "v": 1})
    stream = _pods_stream(store)
    objects = {"u": _pod("Bound"), "v": _pod("Bound")}
    sent = await stream.created_first([(5, "PodBound", {"uid": "u"}), (6, "PodBound", {"uid": "v"})], objects)
    assert [(key, action, seq) for key, action, _, seq in sent] == [("u", "MODIFIED", 5), ("v", "MODIFIED", 6)]
    assert store.asked == 1
