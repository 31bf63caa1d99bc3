"""The preemptions still in flight when one is decided: what each did to the cluster, and the
overlay of them all that the decision was made with.

The preemption service decides a request on a view that may not show its own recent decisions yet
(their evictions and nominations are still on their way): those are overlaid, their victims taken
as gone and their nominations as made. A decision names the ones it overlaid by their requests'
offsets on `preemption-requests` (`PreemptionDecided.in_flight`, as runs), so replay rebuilds the
same overlay from the log; the names are a few integers where the overlay itself was kilobytes per
decision, carried by the broker, stored by the projector and decoded by every reader of the topic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from shared.events import PreemptionDecided

from .packed_failures import positions_of
from .packing import runs

Effects = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]
"""Pods evicted, and nominations made (pod uid → node, "" for a nomination cleared), in order."""


def effects_of(decided: PreemptionDecided) -> Effects:
    """What a decision does to the cluster: its victims evicted, the nominations it clears, then the
    preemptor's own nomination."""
    nominating = [(uid, "") for uid in decided.cleared]
    if decided.nominated_node:
        nominating.append((decided.preemptor_uid, decided.nominated_node))
    return tuple(v.uid for v in decided.victims), tuple(nominating)


def overlay(in_flight: Iterable[Effects]) -> tuple[list[str], dict[str, str]]:
    """The decisions' effects together, in the order given (a later nomination of a pod wins)."""
    evicting: set[str] = set()
    nominating: dict[str, str] = {}
    for victims, nominations in in_flight:
        evicting.update(victims)
        nominating.update(nominations)
    return sorted(evicting), nominating


def offsets_as_runs(offsets: Iterable[int]) -> list[int]:
    """Requests' offsets as a decision names them: ascending, each once, as runs (first, count, …)."""
    return runs(np.unique(np.asarray(list(offsets), dtype=np.intp)))


def recorded_overlay(decided: PreemptionDecided,
                     by_request: Mapping[int, PreemptionDecided]) -> tuple[list[str], dict[str, str]]:
    """The overlay `decided` was made with: that of the decisions it names (`by_request`: decisions
    by their requests' offsets), in request order, or the one it carries itself (decisions made
    before they were named). A named decision the log lacks is left out."""
    if not decided.in_flight:
        return list(decided.evicting), dict(decided.nominating)
    found = (by_request.get(at) for at in positions_of(decided.in_flight).tolist())
    return overlay(effects_of(d) for d in found if d is not None)
