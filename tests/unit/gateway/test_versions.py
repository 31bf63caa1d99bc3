"""An object's resourceVersion: a stored object never shows version 0, even when it was stored
between the read of the versions and the read of the object."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from services.gateway import versions
from shared.ports import EventStoreReader


class Versions:
    """Each key's creation seq and latest seq."""

    def __init__(self, stored: dict[str, tuple[int, int]]) -> None:
        self.stored = stored
        self.asked: list[list[str]] = []

    async def created_at(self, keys: Sequence[str], created: Sequence[str]) -> dict[str, int]:
        assert list(created) == ["NodeUpserted"]
        self.asked.append(list(keys))
        return {k: v[0] for k, v in self.stored.items() if k in keys}


def _node(name: str) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name}}


async def test_an_object_stored_after_its_versions_were_read_gets_its_creation_version() -> None:
    # "b" was created at seq 9 after the versions were read, and changed at seq 12 since: its row
    # may be either, so it gets 9, which a write from a row of 12 fails against (and is retried).
    store = Versions({"a": (2, 3), "b": (9, 12)})
    found = {"a": 3}
    items = await versions.stamped(cast(EventStoreReader, store), "Node", [_node("a"), _node("b")], found)
    assert [i["metadata"]["resourceVersion"] for i in items] == ["3", "9"]
    assert store.asked == [["b"]]


async def test_versions_found_are_not_read_again() -> None:
    store = Versions({"a": (3, 3)})
    items = await versions.stamped(cast(EventStoreReader, store), "Node", [_node("a")], {"a": 3})
    assert items[0]["metadata"]["resourceVersion"] == "3" and store.asked == []


async def test_kinds_without_versions_pass_unchanged() -> None:
    store = Versions({})
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}
    assert await versions.stamped(cast(EventStoreReader, store), "Pod", [pod], {}) == [pod]
    assert store.asked == []
