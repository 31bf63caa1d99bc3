"""The collector settings for long-running work."""

from __future__ import annotations

import gc

from shared.memory import THRESHOLDS, settle_heap


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
