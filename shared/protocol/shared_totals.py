"""Rankings that the pods of one batch decision share when one walk answered them all.

Pods that only their names tell apart are walked once per batch (`same_answers`): their merged
feasible nodes are equal and their raw score columns are one object. Once a pod's own PreScore has
run, its totals read nothing else when every score plugin still active normalizes with
DefaultNormalizeScore or not at all: the columns, the weights and which plugins PreScore skipped
decide them. So such pods share the totals and their order, computed once per batch decision; each
pod still runs its own PreScore (its skips and errors are its own) and draws its pick with its own
seed. A plugin whose NormalizeScore reads PreScore's state (PodTopologySpread, InterPodAffinity
when they score) makes every pod rank on its own, as before. Where a pod's PreScore outcome is its
spec's alone (`Framework.pre_score_alike`), a pod of the same spec takes the kept ranking without
running PreScore.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from shared.framework.cycle_state import CycleState
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.score_columns import Column
from shared.framework.snapshot import Snapshot

from .sharded import known_infos, known_names, raw_columns

MAX_FALLBACKS = 3


@dataclass(frozen=True)
class Ranking:
    """Feasible nodes with their totals, ordered for the seeded pick."""

    names: list[str]
    ties: npt.NDArray[np.intp]
    """Positions of the best total, in walk order."""
    best_first: list[int]
    """The MAX_FALLBACKS + 1 best positions; equal totals in walk order (the best ones first)."""

    @classmethod
    def of(cls, names: list[str], totals: Column) -> Ranking:
        # A stable sort keeps equal totals in their walk order, as sorted(...) of the nodes would.
        best_first = np.argsort(-totals, kind="stable")[:MAX_FALLBACKS + 1]
        return cls(names, np.flatnonzero(totals == totals[best_first[0]]), best_first.tolist())

    def pick(self, seed: int) -> list[str]:
        """The seeded pick among the best totals, then up to MAX_FALLBACKS more, best first.
        Fallbacks among the best totals are drawn on with the pick's generator, as the pick would
        be drawn were the nodes before them gone: pods of one batch that share a ranking then fall
        back to different nodes, not all to the first ones in walk order."""
        ties = self.ties
        if len(ties) == 1:
            host, drawn = int(ties[0]), []
        else:
            rng = random.Random(seed)
            at = rng.randrange(len(ties))
            host = int(ties[at])
            others = rng.sample(range(len(ties) - 1), min(MAX_FALLBACKS, len(ties) - 1))
            drawn = [int(ties[i + (i >= at)]) for i in others]
        rest = (drawn + self.best_first[len(ties):])[:MAX_FALLBACKS]
        return [self.names[host], *(self.names[i] for i in rest)]


@dataclass
class _Walk:
    raw: Mapping[str, Mapping[str, int]]
    """Held so that its id names it for as long as the memo lives."""
    feasible: list[str]
    names: list[str]
    rankings: dict[tuple[int, frozenset[str]], Ranking] = field(default_factory=dict)
    by_spec: dict[tuple[int, bytes], Ranking] = field(default_factory=dict)
    """Rankings by profile and pod spec, for pods whose PreScore outcome is their spec's alone."""


class SharedTotals:
    """One batch decision's rankings by walk answer. The view's node set must not change while it
    lives (a batch is decided in one synchronous call, with nothing folded meanwhile)."""

    def __init__(self) -> None:
        self._walks: dict[int, _Walk] = {}

    def rank(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, feasible: list[str],
             raw: Mapping[str, Mapping[str, int]]) -> Ranking | str:
        """The pod's ranking (PreScore run on `state`), or PreScore's or scoring's error message;
        `fwk` has score plugins (without, every node scores alike and PreScore does not run)."""
        walk = self._walks.get(id(raw))
        if walk is None or (walk.feasible is not feasible and walk.feasible != feasible):
            walk = self._walks[id(raw)] = _Walk(raw, feasible, known_names(snapshot, feasible))
        names = walk.names
        if not names:
            return "every feasible node has left the view"
        # A pod whose PreScore would skip and fail as an identical one's did ranks as that one.
        alike = fwk.pre_score_alike(pod)
        spec = (id(fwk), pod.signature()) if alike else None
        if spec is not None and (same := walk.by_spec.get(spec)) is not None:
            return same
        s = fwk.run_pre_score_plugins(state, pod, known_infos(snapshot, names))
        if s is not None and not s.is_success():
            return s.message()
        key = (id(fwk), frozenset(state.skip_score_plugins))
        ranking = walk.rankings.get(key)
        if ranking is None:
            totals, error = fwk.finish_totals(state, pod, names, raw_columns(fwk, state, names, raw))
            if error is not None:
                return error.message()
            ranking = Ranking.of(names, totals)
            if not columns_alone(fwk, state):
                return ranking
            walk.rankings[key] = ranking
        if spec is not None:
            walk.by_spec[spec] = ranking
        return ranking


def columns_alone(fwk: Framework, state: CycleState) -> bool:
    """Whether the totals read nothing but the raw columns: no active score plugin normalizes
    with state of its own."""
    for pl in fwk.score_plugins:
        if pl.name in state.skip_score_plugins:
            continue
        ext = pl.score_extensions()
        if ext is not None and ext.DEFAULT_NORMALIZE is None:
            return False
    return True
