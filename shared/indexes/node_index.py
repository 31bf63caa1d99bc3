"""A pod signature's per-node results in arrays: the Filter verdict of node-local plugins and the
raw score of node-local Score plugins, for every node of one snapshot.

A node's entries are recomputed only after the NodeInfo change journal names it, so the
round-robin walk for the thousandth identical pod reads arrays where it would call every plugin
on every node. The walk itself is upstream's findNodesThatPassFilters taken in slices: each slice
ends where the feasible nodes still wanted could at the earliest be found, so no node past the
sequential walk's stop is ever evaluated and the outcome (feasible nodes, statuses, how many
nodes were processed) is the sequential walk's.

Pure apart from the plugins it calls; the caller decides when the index applies (every Filter and
Score plugin of the cycle node-local, see `Framework.filters_are_node_local`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from operator import itemgetter
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    FilterPlugin,
    ScoreExtensions,
    ScorePlugin,
)
from shared.framework.node_info import NodeInfo, changed_since, journal_end
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework, wrap_error
from shared.framework.score_columns import weighted_column
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status

from .nominated_positions import NominatedPositions, NominationLog
from .rejections import Rejections, StatusTable

INDEXED_SIGNATURES = 8  # distinct pod specs whose per-node results are kept
Indexes = npt.NDArray[np.intp]
Mask = npt.NDArray[np.bool_]


class FilterChecks(Protocol):
    """The framework's Filter entry points the walk calls."""

    def run_filter_plugins(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None: ...

    def run_node_local_filters(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None: ...

    def run_filters(self, filters: tuple[Any, ...], state: CycleState, pod: PodInfo,
                    node_info: NodeInfo) -> Status | None: ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: PodInfo,
                                               node_info: NodeInfo) -> Status | None: ...

    def counted_nominations(self, pod: PodInfo, node_name: str) -> list[PodInfo]: ...

    def counted_nominations_key(self, pod: PodInfo) -> Callable[[str], Hashable]: ...

    def nomination_stamps(self, pod: PodInfo) -> tuple[Mapping[str, int], str | None] | None: ...

    def nomination_log(self) -> NominationLog | None: ...


class WalkError(Exception):
    """A Filter plugin answered Error on a node the walk reached."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


class Walk:
    """What a walk found: feasible node positions in walk order, and the rejected nodes."""

    __slots__ = ("feasible", "rejected")

    def __init__(self, feasible: Indexes, rejected: Rejections) -> None:
        self.feasible = feasible
        self.rejected = rejected


class _KeptNominated:
    """A walk's nominated nodes (in position order): which have a verdict kept against the node
    as it is and their current stamp, those stamps, and the pod's own nominated node's position
    (-1: none)."""

    __slots__ = ("valid", "stamps", "own")

    def __init__(self, valid: Mask, stamps: npt.NDArray[np.int64], own: int) -> None:
        self.valid, self.stamps, self.own = valid, stamps, own


class NodeIndex:
    """One pod signature's node-local results over one snapshot's nodes."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.nodes = snapshot.node_info_list
        self.names = snapshot.names
        self.position = snapshot.position()
        n = len(self.nodes)
        self._cursor = journal_end()
        self._known = np.zeros(n, dtype=bool)
        self._fits = np.zeros(n, dtype=bool)
        self._statuses: list[Status | None] = [None] * n
        self._table = StatusTable()
        self._status_id = np.full(n, -1, dtype=np.int32)  # into _table where a node-local filter rejected
        # Verdicts with nominated pods counted: position -> ((generation, counted nominations key), status).
        self._with_nominated: dict[int, tuple[Hashable, Status | None]] = {}
        # The same verdicts as arrays where the nominator stamps: kept against the node as it is
        # (until the change journal names it) and the stamp, so a walk past hundreds of
        # nominated nodes checks them in a few array operations.
        self._nominated = NominatedPositions(self.position, n)
        self._nom_valid = np.zeros(n, dtype=bool)
        self._nom_stamp = np.full(n, -1, dtype=np.int64)
        self._nom_fits = np.zeros(n, dtype=bool)
        self._nom_status_id = np.full(n, -1, dtype=np.int32)
        self._scored = np.zeros(n, dtype=bool)
        self._scorers: tuple[tuple[str, int], ...] = ()
        self._raw = np.zeros((0, n), dtype=np.int64)
        self._base = np.zeros(n, dtype=np.int64)
        self._out_of_range = np.zeros(n, dtype=bool)
        self._extensions: list[tuple[int, ScoreExtensions | None]] = []
        self._mask_of: Collection[str] | None = None
        self._mask = np.zeros(0, dtype=bool)

    def nodes_at(self, positions: Indexes) -> list[NodeInfo]:
        """The NodeInfos at `positions`, in that order."""
        at = positions.tolist()
        if len(at) < 2:
            return [self.nodes[i] for i in at]
        return list(itemgetter(*at)(self.nodes))

    def mask(self, names: Collection[str]) -> Mask:
        """The positions of `names`, remembered for the collection last asked about."""
        if self._mask_of is not names:
            mask = np.zeros(len(self.nodes), dtype=bool)
            for name in names:
                i = self.position.get(name)
                if i is not None:
                    mask[i] = True
            self._mask_of, self._mask = names, mask
        return self._mask

    def catch_up(self) -> None:
        """Forget what the journal says changed since the last call."""
        changed = changed_since(self._cursor)
        self._cursor = journal_end()
        if changed is None:
            self._known[:] = False
            self._scored[:] = False
            self._nom_valid[:] = False
            return
        position, nodes = self.position, self.nodes
        for info in changed:
            i = position.get(info.name)
            if i is not None and nodes[i] is info:
                self._known[i] = False
                self._scored[i] = False
                self._nom_valid[i] = False

    # -- Filter -----------------------------------------------------------------------------------
    def walk(self, checks: FilterChecks, state: CycleState, pod: PodInfo, start: int, to_find: int,
             rest: tuple[Any, ...] = (), within: Mask | None = None) -> Walk:
        """The round-robin walk from `start` until `to_find` nodes fit. The index keeps the
        leading node-local filters' verdicts; `rest`, the filters after them, runs on each node
        those pass. A node some pod is nominated to is checked with the nominated pods it must
        count, a verdict kept (when `rest` is empty) while the node and those pods stay the same.
        `within` (a filter shard's nodes, see `mask`): the other nodes are passed over."""
        n = len(self.nodes)
        asked, keys, kept = self._nominated_nodes(checks, pod, within, rest)
        maybe = within
        if kept is not None and np.any(failing := kept.valid & ~self._nom_fits[asked]):
            maybe = np.ones(n, dtype=bool) if within is None else within.copy()
            maybe[asked[failing]] = False  # the walk need not stop at a node known to reject
        by_labels = _verdicts_by_labels(rest, state)
        refused = 0  # label combinations the walk found rejecting, when `may` was last narrowed
        may = maybe
        found: list[Indexes] = []
        count = 0
        failed_at: list[Indexes] = []
        failed_ids: list[npt.NDArray[np.int32]] = []
        # The walk order is two runs of positions: [start, n), then [0, start).
        for run_start, run_end in ((start, n), (0, start)):
            lo = run_start
            while lo < run_end and count < to_find:
                if by_labels is not None and len(by_labels[2]) != refused:
                    refused = len(by_labels[2])
                    may = self._not_refused_by_labels(by_labels, maybe)
                hi = self._slice_end(lo, run_end, to_find - count, may)
                inside = within[lo:hi] if within is not None else None
                fits, unkept = self._segment(checks, state, pod, lo, hi, asked, keys, rest, by_labels, inside, kept)
                ok = fits.nonzero()[0]
                found.append(ok + lo)
                count += len(ok)
                if len(ok) < (hi - lo if inside is None else np.count_nonzero(inside)):
                    failed = (~fits if inside is None else inside & ~fits).nonzero()[0] + lo
                    ids = self._status_id[failed]
                    if unkept:  # statuses the index does not keep replace the kept ones
                        at, unkept_ids = unkept.joined()
                        ids[np.searchsorted(failed, at)] = unkept_ids
                    failed_at.append(failed)
                    failed_ids.append(ids)
                lo = hi
        feasible = np.concatenate(found) if len(found) > 1 else found[0] if found else np.zeros(0, dtype=np.intp)
        rejected = Rejections(self, self._table, _joined(failed_at, np.intp), _joined(failed_ids, np.int32))
        return Walk(feasible, rejected)

    def first_fit(self, checks: FilterChecks, state: CycleState, pod: PodInfo) -> int:
        """The first position (from 0) whose node passes Filter, nominated pods counted, or -1:
        `walk(0, 1)`'s feasible node without its rejections, for a pod whose filters are all
        node-local (the walk's `rest` empty). The nodes known to fail (node-local verdicts, and
        nominated nodes' verdicts kept against their stamps) are passed over as arrays; the
        others are checked one by one in order, and the first Error among them is raised. (The
        walk also checks a nominated node that fails node-local with its nominated pods, and
        would raise an Error met there: the feasible node is the same.) When every node is full
        but some are nominated (a preemptor asking whether it fits now), this is a few array
        operations."""
        asked, keys, kept = self._nominated_nodes(checks, pod, None, ())
        may = ~self._known | self._fits
        if kept is not None:
            may[asked[kept.valid & ~self._nom_fits[asked]]] = False
        for i in may.nonzero()[0].tolist():
            if not self._known[i]:
                error = self._learn(checks, state, pod, [i])
                if error is not None:
                    raise WalkError(error[1])
                if not self._fits[i]:
                    continue
            j = int(np.searchsorted(asked, i))
            if j == len(asked) or asked[j] != i:
                return i  # not nominated: the node-local verdict is the whole one
            if kept is not None and kept.valid[j]:
                return i  # a kept verdict that fits (the failing ones are not in `may`)
            if self._check_nominated_kept(checks, state, pod, i, j, keys, kept) < 0:
                return i
        return -1

    def _nominated_nodes(self, checks: FilterChecks, pod: PodInfo, within: Mask | None, rest: tuple[Any, ...]
                         ) -> tuple[Indexes, Callable[[str], Hashable] | None, _KeptNominated | None]:
        """The nodes some pod is nominated to (those `within`), ascending, which a walk checks with
        their nominated pods; where no filter runs after the index, the key of the nominated pods
        a node counts and the verdicts kept for those nodes."""
        log = checks.nomination_log()
        if log is not None:
            self._nominated.follow(log)
            asked = self._nominated.positions(within)
        else:  # nobody is nominated anywhere (see `filters_after_index`)
            asked = np.zeros(0, dtype=np.intp)
        keys = checks.counted_nominations_key(pod) if len(asked) and not rest else None
        kept = self._kept_nominated(checks, pod, asked) if keys is not None else None
        return asked, keys, kept

    def _check_nominated_kept(self, checks: FilterChecks, state: CycleState, pod: PodInfo, i: int, j: int,
                              keys: Callable[[str], Hashable] | None, kept: _KeptNominated | None) -> int:
        """Check nominated node `i` (place `j` among the walk's nominated nodes) with its nominated
        pods; the rejection's status id, -1 when it fits. An Error is raised. The verdict is kept
        against the node as it is and the nominator's stamp (never for the pod's own node)."""
        s = self._check_nominated(checks, state, pod, i, keys, cache=True)
        if s is not None and s.code == Code.ERROR:
            raise WalkError(s)
        status_id = -1 if s is None or s.code == Code.SUCCESS else self._table.intern(s)
        if kept is not None and i != kept.own:
            self._nom_valid[i] = True
            self._nom_stamp[i] = kept.stamps[j]
            self._nom_fits[i] = status_id < 0
            self._nom_status_id[i] = status_id
        return status_id

    def _kept_nominated(self, checks: FilterChecks, pod: PodInfo, asked: Indexes) -> _KeptNominated | None:
        """For the nominated nodes `asked`: their current stamps (`_nominated` has caught up),
        and which have a verdict kept against the node as it is and that stamp (the pod's own
        nominated node never: who it is matters there). None when the nominator keeps no stamps."""
        stamped = checks.nomination_stamps(pod)
        if stamped is None:
            return None
        own_node = stamped[1]
        current = self._nominated.stamp[asked]
        valid = self._nom_valid[asked] & (self._nom_stamp[asked] == current)
        own = self.position.get(own_node, -1) if own_node else -1
        if own >= 0:
            valid[asked == own] = False
        return _KeptNominated(valid, current, own)

    def _not_refused_by_labels(self, by_labels: _ByLabels, maybe: Mask | None) -> Mask:
        """`maybe` (every node when None) less the nodes whose label values the walk has found
        rejected: every feasible node is still among them, so slices may end by them (a node
        nominated pods are counted on is rejected too, by its plain verdict)."""
        label_ids, values = self.snapshot.label_ids(by_labels[0])
        refused = np.zeros(len(values), dtype=bool)
        refused[by_labels[2]] = True
        open_ = ~refused[label_ids]
        return open_ if maybe is None else open_ & maybe

    def _slice_end(self, lo: int, run_end: int, want: int, maybe: Mask | None) -> int:
        """Where the next slice from `lo` ends: just after the `want`-th node that may fit (one not
        known to fail the node-local filters, among `maybe`). Every feasible node is such a node,
        so the sequential walk cannot have found `want` feasible nodes before that point; where
        nodes are known to fail (every node, for a preemptor) one slice covers them all."""
        # Looking twice as far as wanted first keeps the common case (most nodes fit) short.
        for end in (min(lo + 2 * want, run_end), run_end):
            may = ~self._known[lo:end] | self._fits[lo:end]
            if maybe is not None:
                may &= maybe[lo:end]
            at = may.nonzero()[0]
            if len(at) >= want:
                return lo + int(at[want - 1]) + 1
        return run_end

    def _segment(self, checks: FilterChecks, state: CycleState, pod: PodInfo, lo: int, hi: int,
                 asked: Indexes, keys: Callable[[str], Hashable] | None, rest: tuple[Any, ...],
                 by_labels: _ByLabels | None, inside: Mask | None,
                 kept: _KeptNominated | None = None) -> tuple[Mask, _Rejected]:
        """Positions [lo, hi) (those `inside` when given): which fit, and the nodes rejected with
        a status the index does not keep (nominated pods counted, or a `rest` filter), with that
        status's id. A filter's Error is raised for the first node in walk order that has one, as
        the sequential walk would. `kept`: the nominated nodes' verdicts kept as arrays."""
        unknown = ~self._known[lo:hi]
        stale = (unknown if inside is None else unknown & inside).nonzero()[0]
        error = self._learn(checks, state, pod, (stale + lo).tolist()) if len(stale) else None
        limit = error[0] if error is not None else hi
        fits = self._fits[lo:hi] if inside is None else self._fits[lo:hi] & inside
        out = _Rejected()
        first, last = int(np.searchsorted(asked, lo)), int(np.searchsorted(asked, limit))
        nominated = asked[first:last]
        one_by_one = nominated
        if kept is not None and len(nominated):
            valid = kept.valid[first:last]
            if valid.any():
                cached = nominated[valid]
                ok = self._nom_fits[cached]
                fits = fits.copy()
                fits[cached - lo] = ok
                rejected = cached[~ok]
                out.extend(rejected, self._nom_status_id[rejected])
                one_by_one = nominated[~valid]
            if len(one_by_one):
                fits = self._check_and_keep(checks, state, pod, lo, fits, one_by_one, first + (~valid).nonzero()[0],
                                            keys, kept, out)
            if error is not None:
                raise WalkError(error[1])
            return fits, out
        if rest:
            passing = fits[:limit - lo].nonzero()[0] + lo
            one_by_one = np.union1d(nominated, passing) if len(nominated) else passing
        if len(one_by_one):
            fits = fits.copy()
            first_error: tuple[int, Status] | None = None
            if by_labels is not None:
                others = np.setdiff1d(passing, nominated, assume_unique=True) if len(nominated) else passing
                first_error = self._by_labels(checks, state, pod, rest, by_labels, others, lo, fits,
                                              out)
                one_by_one = nominated
            check_nominated = set(nominated.tolist()) if rest else None
            for i in one_by_one.tolist():
                if first_error is not None and i > first_error[0]:
                    break
                if check_nominated is None or i in check_nominated:
                    s = self._check_nominated(checks, state, pod, i, keys, cache=not rest)
                else:
                    s = checks.run_filters(rest, state, pod, self.nodes[i])
                if s is None or s.code == Code.SUCCESS:
                    fits[i - lo] = True
                    continue
                if s.code == Code.ERROR:
                    raise WalkError(s)
                fits[i - lo] = False
                out.append(i, self._table.intern(s))
            if first_error is not None:
                raise WalkError(first_error[1])
        if error is not None:
            raise WalkError(error[1])
        return fits, out

    def _check_and_keep(self, checks: FilterChecks, state: CycleState, pod: PodInfo, lo: int, fits: Mask,
                        at: Indexes, in_asked: Indexes, keys: Callable[[str], Hashable] | None,
                        kept: _KeptNominated, out: _Rejected) -> Mask:
        """Check the nominated nodes `at` (their places in the walk's nominated nodes: `in_asked`)
        one by one, in walk order, keeping each verdict against the node's generation and stamp."""
        fits = fits.copy()
        for i, j in zip(at.tolist(), in_asked.tolist()):
            status_id = self._check_nominated_kept(checks, state, pod, i, j, keys, kept)
            fits[i - lo] = status_id < 0
            if status_id >= 0:
                out.append(i, status_id)
        return fits

    def _by_labels(self, checks: FilterChecks, state: CycleState, pod: PodInfo, rest: tuple[Any, ...],
                   by_labels: _ByLabels, at: Indexes, lo: int, fits: Mask,
                   out: _Rejected) -> tuple[int, Status] | None:
        """The `rest` filters' verdicts on the nodes `at`, asked once per combination of the label
        values that decide them (any node with those values stands for all); `fits` and the
        rejections are filled in. The first node in `at` whose verdict is an Error, with it."""
        if not len(at):
            return None
        label_ids, values = self.snapshot.label_ids(by_labels[0])
        ids = label_ids[at]
        present, first = np.unique(ids, return_index=True)
        verdict = np.zeros(len(values), dtype=np.int8)  # 1: fits, 0: rejected, -1: Error
        status_id = np.full(len(values), -1, dtype=np.int32)
        errors: dict[int, Status] = {}
        for c, f in zip(present.tolist(), first.tolist()):
            s = by_labels[1].get(values[c], _UNDECIDED)
            if s is _UNDECIDED:
                s = by_labels[1][values[c]] = checks.run_filters(rest, state, pod, self.nodes[int(at[f])])
                if s is not None and s.code not in (Code.SUCCESS, Code.ERROR):
                    by_labels[2].append(c)
            if s is None or s.code == Code.SUCCESS:
                verdict[c] = 1
            elif s.code == Code.ERROR:
                verdict[c] = -1
                errors[c] = s
            else:
                status_id[c] = self._table.intern(s)
        got = verdict[ids]
        fits[at - lo] = got == 1
        rejected = (got == 0).nonzero()[0]
        out.extend(at[rejected], status_id[ids[rejected]])
        if not errors:
            return None
        k = int(np.argmax(got == -1))
        return int(at[k]), errors[int(ids[k])]

    def _check_nominated(self, checks: FilterChecks, state: CycleState, pod: PodInfo, i: int,
                         keys: Callable[[str], Hashable] | None, *, cache: bool) -> Status | None:
        info = self.nodes[i]
        if not cache or keys is None:
            return checks.run_filter_plugins_with_nominated_pods(state, pod, info)
        key = (info.generation, keys(info.name))
        kept = self._with_nominated.get(i)
        if kept is not None and kept[0] == key:
            return kept[1]
        if checks.counted_nominations(pod, info.name):
            s = checks.run_filter_plugins_with_nominated_pods(state, pod, info)
        else:
            s = self._statuses[i] if self._known[i] else checks.run_filter_plugins(state, pod, info)
        if s is None or s.code != Code.ERROR:
            self._with_nominated[i] = (key, s)
        return s

    def _learn(self, checks: FilterChecks, state: CycleState, pod: PodInfo,
               stale: list[int]) -> tuple[int, Status] | None:
        """Keep the node-local verdicts of `stale` (ascending); stop at the first Error."""
        for i in stale:
            s = checks.run_node_local_filters(state, pod, self.nodes[i])
            if s is not None and s.code == Code.ERROR:
                return i, s
            ok = s is None or s.code == Code.SUCCESS
            self._fits[i] = ok
            self._statuses[i] = None if ok else s
            self._status_id[i] = -1 if ok or s is None else self._table.intern(s)
            self._known[i] = True
        return None

    # -- Score ---------------------------------------------------------------------------------------
    def totals(self, state: CycleState, pod: PodInfo, scorers: Sequence[ScorePlugin],
               weights: dict[str, int], feasible: Indexes) -> npt.NDArray[np.int64] | Status:
        """Each feasible node's weighted total over `scorers` (NormalizeScore over the feasible
        nodes, as upstream), or the Error status a plugin gave; PreScore must have run on `state`.
        A total is exact up to a constant shared by every node (a column that is the same
        everywhere is left out), which is all the pick needs.

        The plugins without NormalizeScore are kept summed and weighted per node (`_base`), with
        a flag for a node where one of them scored out of range; the others keep raw columns."""
        key, error = self._scores_for(state, pod, scorers, weights, feasible)
        if error is not None:
            return error
        if self._out_of_range[feasible].any():
            return self._totals_by_plugin(state, pod, scorers, key, feasible)
        totals = self._base[feasible]
        for p, ext in self._extensions:
            if ext is not None:
                if _constant_when_zero(ext) and not self._raw[p, feasible].any():
                    continue  # every node normalizes to one score in range: the pick is the same
                column = self._weighted_column(state, pod, scorers[p].name, key[p][1], ext, p, feasible)
                if isinstance(column, Status):
                    return column
                totals = totals + column
        return totals

    def raw_columns(self, state: CycleState, pod: PodInfo, scorers: Sequence[ScorePlugin],
                    weights: dict[str, int], positions: Indexes) -> dict[str, npt.NDArray[np.int64]] | Status:
        """Each plugin's raw scores for `positions`, as `Framework.run_raw_score_plugins` gives them
        (a filter shard's answer); PreScore must have run on `state`."""
        _, error = self._scores_for(state, pod, scorers, weights, positions)
        if error is not None:
            return error
        return {pl.name: self._raw[p, positions] for p, pl in enumerate(scorers)}

    def _scores_for(self, state: CycleState, pod: PodInfo, scorers: Sequence[ScorePlugin], weights: dict[str, int],
                    positions: Indexes) -> tuple[tuple[tuple[str, int], ...], Status | None]:
        """Score the nodes at `positions` not scored since they changed."""
        key = tuple((pl.name, weights.get(pl.name, 1)) for pl in scorers)
        if key != self._scorers:
            self._scorers = key
            self._raw = np.zeros((len(scorers), len(self.nodes)), dtype=np.int64)
            self._base = np.zeros(len(self.nodes), dtype=np.int64)
            self._out_of_range = np.zeros(len(self.nodes), dtype=bool)
            self._extensions = [(p, pl.score_extensions()) for p, pl in enumerate(scorers)]
            self._scored[:] = False
        stale = positions[~self._scored[positions]]
        if len(stale):
            return key, self._score(state, pod, scorers, key, stale.tolist())
        return key, None

    def _score(self, state: CycleState, pod: PodInfo, scorers: Sequence[ScorePlugin],
               key: tuple[tuple[str, int], ...], stale: list[int]) -> Status | None:
        raw, base, out_of_range, extensions = self._raw, self._base, self._out_of_range, self._extensions
        for i in stale:
            info = self.nodes[i]
            total = 0
            bad = False
            for p, pl in enumerate(scorers):
                value, st = pl.score(state, pod, info)
                if st is not None and st.code != Code.SUCCESS:
                    return wrap_error(f"running Score plugin {pl.name!r}", st, pl.name)
                raw[p, i] = value
                if extensions[p][1] is None:
                    total += value * key[p][1]
                    bad = bad or value > MAX_NODE_SCORE or value < MIN_NODE_SCORE
            base[i] = total
            out_of_range[i] = bad
            self._scored[i] = True
        return None

    def _totals_by_plugin(self, state: CycleState, pod: PodInfo, scorers: Sequence[ScorePlugin],
                          key: tuple[tuple[str, int], ...], feasible: Indexes) -> npt.NDArray[np.int64] | Status:
        """Totals plugin by plugin, in the framework's order, so that the first column out of range
        is the one reported."""
        totals = np.zeros(len(feasible), dtype=np.int64)
        for p, ext in self._extensions:
            column = self._weighted_column(state, pod, scorers[p].name, key[p][1], ext, p, feasible)
            if isinstance(column, Status):
                return column
            totals += column
        return totals

    def _weighted_column(self, state: CycleState, pod: PodInfo, name: str, weight: int, ext: ScoreExtensions | None,
                         p: int, feasible: Indexes) -> npt.NDArray[np.int64] | Status:
        """Plugin `p`'s scores of the feasible nodes: normalized, checked for range, weighted."""
        return weighted_column(name, ext, weight, state, pod, lambda: [self.names[i] for i in feasible.tolist()],
                               self._raw[p, feasible])


def _constant_when_zero(ext: ScoreExtensions) -> bool:
    """A column of zeros normalizes to one in-range score for every node (0, or the maximum when
    reversed): DefaultNormalizeScore with a maximum in range."""
    default = ext.DEFAULT_NORMALIZE
    return default is not None and (not default[1] or MIN_NODE_SCORE <= default[0] <= MAX_NODE_SCORE)


class _Rejected:
    """The nodes a segment rejected with a status the index does not keep, with that status's id:
    gathered as arrays where they come as arrays (hundreds of nominated nodes a walk), so the walk
    never turns them into Python ints and back."""

    __slots__ = ("_at", "_ids", "_parts")

    def __init__(self) -> None:
        self._at: list[int] = []
        self._ids: list[int] = []
        self._parts: list[tuple[Indexes, npt.NDArray[np.int32]]] = []

    def __bool__(self) -> bool:
        return bool(self._at) or any(len(at) for at, _ in self._parts)

    def append(self, at: int, status_id: int) -> None:
        self._at.append(at)
        self._ids.append(status_id)

    def extend(self, at: Indexes, status_ids: npt.NDArray[np.int32]) -> None:
        self._parts.append((at, status_ids))

    def joined(self) -> tuple[Indexes, npt.NDArray[np.int32]]:
        parts = self._parts if not self._at else [
            *self._parts, (np.array(self._at, dtype=np.intp), np.array(self._ids, dtype=np.int32))]
        if len(parts) == 1:
            return parts[0]
        return (np.concatenate([at for at, _ in parts]), np.concatenate([ids for _, ids in parts]))


_UNDECIDED: Any = object()
_ByLabels = tuple[tuple[str, ...], dict[tuple[str | None, ...], Any], list[int]]
"""The labels that decide the filters after the node-local ones; the walk's verdict per
combination of their values; the ids (`Snapshot.label_ids`) of the combinations it found rejecting."""


def _verdicts_by_labels(rest: tuple[Any, ...], state: CycleState) -> _ByLabels | None:
    """When every filter after the node-local ones is decided by some node labels alone, those
    labels and the walk's verdict per combination of their values."""
    keys: list[str] = []
    for _, run, _ in rest:
        plugin = getattr(run, "__self__", None)
        labels = plugin.verdict_labels(state) if isinstance(plugin, FilterPlugin) else None
        if labels is None:
            return None
        keys.extend(k for k in labels if k not in keys)
    return (tuple(keys), {}, []) if rest else None


def _joined(parts: list[Any], dtype: type) -> Any:
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def filters_after_index(fwk: Framework, state: CycleState, pod: PodInfo) -> tuple[Any, ...] | None:
    """The filters a walk through the index runs after its node-local ones, or None when the
    index does not apply (no leading node-local filters, or pods nominated by a nominator that
    does not log its changes by node, which the walk follows)."""
    nominated = fwk.nominated_node_names()
    if nominated is None or (nominated and fwk.nomination_log() is None):
        return None
    return fwk.filters_after_node_local(state, pod)


class NodeIndexes:
    """The indexes of the pod specs seen last, per profile; a new snapshot starts afresh."""

    def __init__(self, keep: int = INDEXED_SIGNATURES) -> None:
        self.keep = keep
        self._indexes: OrderedDict[tuple[str, bytes], tuple[object, NodeIndex]] = OrderedDict()

    def get(self, fwk: Framework, pod: PodInfo, snapshot: Snapshot) -> NodeIndex:
        """The pod spec's index over `snapshot`, caught up with the change journal."""
        key = (fwk.profile_name, pod.signature())
        kept = self._indexes.get(key)
        if kept is None or kept[0] is not fwk or kept[1].snapshot is not snapshot:
            kept = self._indexes[key] = (fwk, NodeIndex(snapshot))
            if len(self._indexes) > self.keep:
                self._indexes.popitem(last=False)
        else:
            self._indexes.move_to_end(key)
        kept[1].catch_up()
        return kept[1]
