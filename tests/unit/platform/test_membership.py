"""A restarted service takes its dead predecessor out of its consumer group first."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.runtime import membership
from shared.settings import load_settings


@pytest.fixture
def left(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    calls: list[tuple[str, str]] = []

    async def leave_group(bootstrap: str, group: str, member_id: str) -> bool:
        calls.append((group, member_id))
        return True

    monkeypatch.setattr(membership, "leave_group", leave_group)
    return calls


async def test_the_recorded_member_is_taken_out_once(tmp_path: Path, left: list[tuple[str, str]]) -> None:
    settings = load_settings({"BERTH_MEMBER_FILE": str(tmp_path / "filter.member")},
                             kafka_bootstrap_servers="127.0.0.1:9092")
    membership.remember_member(settings, "berth.berth-filter", "filter-1234")
    await membership.evict_predecessor(settings, "berth.berth-filter")
    assert left == [("berth.berth-filter", "filter-1234")]
    await membership.evict_predecessor(settings, "berth.berth-filter")
    assert len(left) == 1, "the record is used once"


async def test_a_clean_stop_or_another_group_evicts_nobody(tmp_path: Path, left: list[tuple[str, str]]) -> None:
    settings = load_settings({"BERTH_MEMBER_FILE": str(tmp_path / "q.member")}, kafka_bootstrap_servers="k:9092")
    membership.remember_member(settings, "berth.berth-queue", "queue-1")
    membership.forget_member(settings)
    await membership.evict_predecessor(settings, "berth.berth-queue")
    membership.remember_member(settings, "other.berth-queue", "queue-2")
    await membership.evict_predecessor(settings, "berth.berth-queue")
    membership.remember_member(load_settings({}), "berth.berth-queue", "queue-3")  # no file: nothing kept
    assert left == []
