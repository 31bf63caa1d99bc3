"""A pod's shard answers decoded once, where they come off the wire, into typed answers.

On the wire a `PodShardResult` is one of three things (shared.events): a worker's decision for a
proposing request (`ranked`, `walked`), a reference to an earlier pod's answer in the same message
(`same_as`), or a walk's verdicts with its nodes named or packed as runs of positions. The queue's
gatherer, a worker merging its own walks and replay read it through `decode_all`, and every merge
past that point reads a `Decided` or a `Walk`: references resolved (pods that share an answer share
one object, which the merges key their shared work by), runs read into position and score arrays,
statuses made `Status` objects. No reader past the edge tests a mode flag or reads a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from operator import itemgetter

import numpy as np

from shared.events import NodeFailure, PodShardResult
from shared.framework.score_columns import Column
from shared.framework.snapshot import Snapshot
from shared.framework.status import Status
from shared.indexes.rejections import Indexes, Rejections

from .failure_groups import to_status
from .packed_failures import positions_of, rejections_at
from .packing import column_of
from .same_answers import shared_results

NO_POSITIONS: Indexes = np.zeros(0, dtype=np.intp)


@dataclass(frozen=True, slots=True)
class Decided:
    """A worker's decision for a pod: the nodes to try in order, the one it placed the pod on first,
    or the error its ranking failed with; `walked`: the nodes its walk processed."""

    ranked: list[str]
    walked: int
    error: str = ""


@dataclass(frozen=True, slots=True)
class Failed:
    """Nodes that failed with one status: named (`at` None), or as positions in the node order of
    the view at the request's watermark."""

    status: Status
    nodes: list[str]
    at: Indexes | None = None


@dataclass(frozen=True, slots=True)
class Walk:
    """One walk's verdicts over the nodes of the shards it answered for.

    `feasible_at`: the feasible nodes as positions in walk order (None when they are named in
    `feasible`); `columns`: each score plugin's raw scores, aligned with the feasible nodes, when
    `scored`; `on_view`: made on the view at the request's watermark (packed, or naming no node),
    so its positions and rejections read over that view. The other fields are `PodShardResult`'s."""

    feasible: list[str]
    feasible_at: Indexes | None
    columns: dict[str, Column]
    scored: bool
    score_error: str
    failures: list[Failed]
    prefilter: Status | None
    prefilter_nodes: list[str] | None
    rejectors: list[str]
    nominated: Failed | None
    """The nominated node's own status, when it is on the walked shards and fails."""
    error: str
    on_view: bool

    def named(self, names: Sequence[str]) -> Walk:
        """This walk with its feasible nodes named (`names`: the view's nodes in order, as at the
        request's watermark); its failures stay as they are."""
        if self.feasible_at is None:
            return self
        return replace(self, feasible=names_of(names, self.feasible_at), feasible_at=None)


Answer = Decided | Walk


def failed_walk(error: str) -> Walk:
    """A walk that failed with a plugin error (and names no node)."""
    return Walk([], NO_POSITIONS, {}, False, "", [], None, None, [], None, error, True)


def decode(result: PodShardResult) -> Answer:
    """One result (not a reference) as its typed answer."""
    if result.ranked or result.walked:
        return Decided(list(result.ranked), result.walked, result.error)
    return decode_walk(result)


def decode_walk(result: PodShardResult) -> Walk:
    """A walk's result (a result known not to be a decision) as its `Walk`."""
    named = bool(result.feasible)
    failures = [_failed(f) for f in result.failures]
    return Walk(
        feasible=list(result.feasible),
        feasible_at=None if named else positions_of(result.feasible_at),
        columns=_columns(result),
        scored=result.scored,
        score_error=result.score_error,
        failures=failures,
        prefilter=to_status(result.prefilter) if result.prefilter is not None else None,
        prefilter_nodes=result.prefilter_nodes,
        rejectors=result.rejectors,
        nominated=_failed(result.nominated) if result.nominated is not None else None,
        error=result.error,
        on_view=not named and (bool(result.feasible_at) or not failures or any(f.at is not None for f in failures)),
    )


def decode_all(results: Iterable[PodShardResult]) -> list[Answer]:
    """One message's results in order, references resolved: a result several pods share is decoded
    once and is one object for all of them."""
    done: dict[int, Answer] = {}
    out: list[Answer] = []
    for r in shared_results(results):
        answer = done.get(id(r))
        if answer is None:
            answer = done[id(r)] = decode(r)
        out.append(answer)
    return out


def walks(answers: Sequence[Answer]) -> list[Walk]:
    """Answers merged as walks: a decision among other answers (a resent proposing request answered
    twice) counts as a walk that found nothing, failing with its error if it has one."""
    return [a if isinstance(a, Walk) else failed_walk(a.error) for a in answers]


def names_of(names: Sequence[str], at: Indexes) -> list[str]:
    """The names at positions `at`, in order; positions past the view's end are left out, as a
    view that lacks a node leaves its name out."""
    if not len(at):
        return []
    if int(at.max()) >= len(names):
        at = at[at < len(names)]
        if not len(at):
            return []
    if len(at) == 1:
        return [names[int(at[0])]]
    return list(itemgetter(*at.tolist())(names))


def _failed(failure: NodeFailure) -> Failed:
    status = to_status(failure)
    if failure.at and not failure.nodes:
        return Failed(status, [], positions_of(failure.at))
    return Failed(status, list(failure.nodes))


def _columns(result: PodShardResult) -> dict[str, Column]:
    if result.score_runs:
        return {p: column_of(c) for p, c in result.score_runs.items()}
    return {p: np.asarray(c, dtype=np.int64) for p, c in result.scores.items()}


def packed_rejections(failures: Sequence[Failed], snapshot: Snapshot, start: int) -> Rejections | None:
    """Packed `failures` as `snapshot`'s rejections in walk order from `start` (`snapshot`: the view
    at the watermark they were made at); None when one of them names its nodes."""
    groups: list[tuple[Status, Indexes]] = []
    for f in failures:
        if f.at is None:
            return None
        groups.append((f.status, f.at))
    return rejections_at(groups, snapshot, start)


def failed_by_name(failures: Iterable[Failed], names: Sequence[str]) -> dict[str, Status]:
    """Node name → status, packed failures named in `names` (the view's nodes in order, as at the
    request's watermark); equal statuses are one object."""
    out: dict[str, Status] = {}
    shared: dict[tuple[object, tuple[str, ...], str], Status] = {}
    for f in failures:
        key = (f.status.code, tuple(f.status.reasons), f.status.plugin)
        status = shared.setdefault(key, f.status)
        out.update(dict.fromkeys(f.nodes if f.at is None else names_of(names, f.at), status))
    return out
