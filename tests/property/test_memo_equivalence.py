"""Reusing node-local plugin results never changes a decision: the same cluster scheduled with and
without the memo gives the same report, preemptions and messages included."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.model.loader import load_objects
from shared.simulation.simulator import Simulator

from .clusters import clusters


def _report(docs: list[dict], seed: int, memoize: bool) -> bytes:
    sim = Simulator(load_objects(("generated", d) for d in docs), seed=seed)
    for fwk in sim.profiles.values():
        fwk.memoize = memoize
    import msgspec

    return msgspec.json.encode(sim.run())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=clusters(), seed=st.integers(0, 5))
def test_memo_changes_no_outcome(docs: list[dict], seed: int) -> None:
    assert _report(docs, seed, memoize=True) == _report(docs, seed, memoize=False)
