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
    stream = WatchStream(make_mocked_request("GET", "/api/v1/pods?watch=true"), watched, None,  # type: ignore[arg-type]
                         lambda obj: True)
    out = Collected()
    # Submitted, then deleted; a scheduling attempt stored after the deletion is read last.
    await stream._send(out, [("u", "ADDED", _pod("Pending"), 1), ("u", "DELETED", _pod("Deleted"), 2),  # type: ignore[arg-type]
                             ("u", "MODIFIED", _pod("Deleted"), 3)])
    assert [(line["type"], line["object"]["metadata"]["resourceVersion"]) for line in out.lines] == [
        ("ADDED", "1"), ("DELETED", "2")]
