"""A create finds a pod accepted moments ago, even when the projector stores it between the
gateway's two reads (the accepted intents, then the read model)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from services.gateway.existence import pod_exists


@dataclass
class _Row:
    deleted: bool = False


class _Store:
    """The intent log and the read model of one pod, `ns/web`, which the projector stores (its
    event and its row, in one transaction) after `reads_before_stored` reads of either."""

    def __init__(self, reads_before_stored: int, deleted: bool = False) -> None:
        self.reads_left, self.deleted = reads_before_stored, deleted

    def _stored(self) -> bool:
        self.reads_left -= 1
        return self.reads_left < 0

    async def pending_pods(self) -> set[tuple[str, str]]:
        return set() if self._stored() else {("ns", "web")}

    async def pod(self, namespace: str, name: str) -> _Row | None:
        return _Row(self.deleted) if self._stored() else None


@pytest.mark.parametrize("reads_before_stored", [0, 1, 2])
async def test_a_pod_stored_at_any_moment_of_the_check_exists(reads_before_stored: int) -> None:
    store = _Store(reads_before_stored)
    assert await pod_exists(store, store, "ns", "web")  # type: ignore[arg-type]  # the two reads the check makes


async def test_a_deleted_pod_no_longer_exists() -> None:
    store = _Store(0, deleted=True)
    assert not await pod_exists(store, store, "ns", "web")  # type: ignore[arg-type]  # as above
