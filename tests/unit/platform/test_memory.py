"""The collector settings for long-running work: the heap is settled again as the state doubles."""

from __future__ import annotations

import gc

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
