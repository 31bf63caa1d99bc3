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
from shared.framework.interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.score_columns import Column
from shared.framework.snapshot import Snapshot
from shared.framework.status import Status

from .placed_nodes import PlacedNodes, WalkColumns
from .sharded import known_infos, known_names

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
        ties = np.flatnonzero(totals == totals.max())
        if len(ties) > MAX_FALLBACKS:  # the best positions are ties, in walk order
            return cls(names, ties, ties[:MAX_FALLBACKS + 1].tolist())
        # A stable sort keeps equal totals in their walk order, as sorted(...) of the nodes would.
        return cls(names, ties, np.argsort(-totals, kind="stable")[:MAX_FALLBACKS + 1].tolist())

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
class _Kept:
    """A ranking pods share, made from the totals of the pod whose PreScore ran on `state`, and
    made again once the walk's columns change (a node of it placed on: `PlacedNodes`). A changed
    value of a plugin that does not normalize moves its node's total alone; one of a plugin that
    does (over every node) has its whole column weighted again."""
    state: CycleState
    pod: PodInfo
    ranking: Ranking | None = None
    totals: Column | None = None
    weighted: dict[str, Column] = field(default_factory=dict)
    """Per plugin that normalizes, its weighted column."""
    plan: list[tuple[str, int]] = field(default_factory=list)
    """The plugins the totals add up, with their weights."""
    read: int = 0
    """How many of the walk's column changes the totals hold."""

    def rank(self, fwk: Framework, snapshot: Snapshot, names: list[str], raw: Mapping[str, Mapping[str, int]],
             placed: PlacedNodes) -> Ranking | str:
        walk = placed.walk(fwk, self.state, self.pod, snapshot, names, raw)
        changes, self.read = walk.changes[self.read:], len(walk.changes)
        if self.ranking is None or self.totals is None:
            return self._made(fwk, walk, names)
        if not changes:
            return self.ranking
        if any(plugin in self.weighted for plugin, _ in changes):
            return self._made(fwk, walk, names)  # normalized over every node: made again whole
        totals = self.totals
        for i in {i for _, i in changes}:
            total = 0
            for plugin, weight in self.plan:
                kept = self.weighted.get(plugin)
                if kept is not None:
                    total += int(kept[i])
                    continue
                value = int(walk.column(plugin)[i])
                if not MIN_NODE_SCORE <= value <= MAX_NODE_SCORE:
                    return self._made(fwk, walk, names)  # the whole column's check names the error
                total += value * weight
            totals[i] = total
        self.ranking = Ranking.of(names, totals)
        return self.ranking

    def _made(self, fwk: Framework, walk: WalkColumns, names: list[str]) -> Ranking | str:
        totals = np.zeros(len(names), dtype=np.int64)
        self.weighted.clear()
        self.plan = []
        skipped = self.state.skip_score_plugins
        for pl in fwk.score_plugins:
            if pl.name in skipped:
                continue
            weighted = fwk.weighted_column(self.state, self.pod, names, pl.name, walk.column(pl.name))
            if isinstance(weighted, Status):
                return weighted.message()
            if pl.score_extensions() is not None:
                self.weighted[pl.name] = weighted
            self.plan.append((pl.name, fwk.score_weights.get(pl.name, 1)))
            totals += weighted
        self.totals, self.ranking = totals, Ranking.of(names, totals)
        return self.ranking


@dataclass
class _Walk:
    raw: Mapping[str, Mapping[str, int]]
    """Held so that its id names it for as long as the memo lives."""
    feasible: list[str]
    names: list[str]
    rankings: dict[tuple[int, frozenset[str]], _Kept] = field(default_factory=dict)
    by_spec: dict[tuple[int, bytes], _Kept] = field(default_factory=dict)
    """Rankings by profile and pod spec, for pods whose PreScore outcome is their spec's alone."""


class SharedTotals:
    """One batch decision's rankings by walk answer, and its placements so far (`placed`), which
    the rankings follow. The view's node set must not change while it lives (a batch is decided
    in one synchronous call, or in slices with nothing folded between them)."""

    def __init__(self, placed: PlacedNodes | None = None) -> None:
        self._walks: dict[int, _Walk] = {}
        self.placed = placed if placed is not None else PlacedNodes()

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
            return same.rank(fwk, snapshot, names, raw, self.placed)
        s = fwk.run_pre_score_plugins(state, pod, known_infos(snapshot, names))
        if s is not None and not s.is_success():
            return s.message()
        if not columns_alone(fwk, state):
            return _Kept(state, pod).rank(fwk, snapshot, names, raw, self.placed)
        key = (id(fwk), frozenset(state.skip_score_plugins))
        kept = walk.rankings.get(key)
        if kept is None:
            kept = walk.rankings[key] = _Kept(state, pod)
        if spec is not None:
            walk.by_spec[spec] = kept
        return kept.rank(fwk, snapshot, names, raw, self.placed)


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
