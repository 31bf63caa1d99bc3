"""The collector settings for long-running work: the heap is settled again as the state doubles."""

from __future__ import annotations

import gc

import pytest

from shared.memory import THRESHOLDS, HeapKeeper, settle_heap


def test_settling_freezes_what_lives_and_raises_the_thresholds() -> None:
    before = gc.get_threshold()
    try:
        held = [object() for _ in range(1000)]
        settle_heap()
        assert gc.get_threshold() == THRESHOLDS
        assert gc.get_freeze_count() >= len(held)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_the_keeper_settles_at_its_minimum_and_then_each_time_the_state_doubles() -> None:
    before = gc.get_threshold()
    try:
        keeper = HeapKeeper(minimum=100)
        assert [keeper.grown(n) for n in (10, 99, 100, 150, 199, 200, 399, 400)] == [
            False, False, True, False, False, True, False, True]
        assert keeper.settled_at == 400
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_settling_again_freezes_what_is_new_without_thawing_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_threshold()
    thawed: list[None] = []
    try:
        keeper = HeapKeeper(minimum=100)
        keeper.grown(100)  # the first settle is a whole one
        frozen = gc.get_freeze_count()
        monkeypatch.setattr(gc, "unfreeze", lambda: thawed.append(None))
        held: list[list[int]] = [[] for _ in range(1000)]
        assert keeper.grown(200)
        assert gc.get_freeze_count() >= frozen + len(held)
        assert thawed == []
    finally:
        monkeypatch.undo()
        gc.unfreeze()
        gc.set_threshold(*before)
