"""Shard answers packed for the wire: nodes as runs of positions, score columns run-length encoded.

Unpacked, a filter worker's answer names every feasible node a pod's walk found (500 of them on
5,000 nodes) with each score plugin's raw score per node: about 7 KB per pod, 1.5 MB per batch of
256 pods, that the broker carries, the queue decodes and the projector stores. A walk finds nodes
in runs of consecutive positions and neighbouring nodes score alike, so as runs the same answer is
a few dozen integers.

Positions refer to the node order of the view at the request's watermark, which the worker and the
queue share (nodes are ordered by their first NodeUpserted). A worker whose view had folded past
the watermark answers with names (its node order may differ). The queue reads answers through
shared.protocol.answers, which decodes the runs once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec
import numpy as np
import numpy.typing as npt

from shared.events import NodeFailure, PodShardResult

Positions = npt.NDArray[np.intp]


def runs(positions: Positions) -> list[int]:
    """Positions in walk order (ascending, with at most one wrap back to the front) as [first,
    count, first, count, …], each run of positions that follow one another."""
    n = len(positions)
    if not n:
        return []
    first = int(positions[0])
    # Only in walk order does spanning exactly n positions mean one run ([0, 2, 1, 3] would not).
    if int(positions[-1]) - first + 1 == n:
        return [first, n]
    return _runs(positions, np.diff(positions) != 1)


def run_lengths(column: npt.NDArray[np.int64]) -> list[int]:
    """A column as [value, count, value, count, …]: each run of equal values."""
    if not len(column):
        return []
    return _runs(column, np.diff(column) != 0)


def columns_run_lengths(columns: Mapping[str, npt.NDArray[np.int64]]) -> dict[str, list[int]]:
    """`run_lengths` of each column; the columns (all of one length) that hold one value, as most
    do, found with one array operation over them all."""
    if not columns:
        return {}
    block = np.vstack(list(columns.values()))
    n = block.shape[1]
    if not n:
        return {p: [] for p in columns}
    constant = (block == block[:, :1]).all(axis=1).tolist()
    firsts = block[:, 0].tolist()
    return {p: [firsts[k], n] if constant[k] else run_lengths(c) for k, (p, c) in enumerate(columns.items())}


def _runs(values: npt.NDArray[np.int64] | Positions, breaks: npt.NDArray[np.bool_]) -> list[int]:
    """[value at a run's start, the run's length, …], given where consecutive values break a run."""
    starts = np.concatenate(([0], np.flatnonzero(breaks) + 1))
    out = np.empty(2 * len(starts), dtype=np.int64)
    out[0::2], out[1::2] = values[starts], np.diff(np.append(starts, len(values)))
    return out.tolist()


def column_of(packed: Sequence[int]) -> npt.NDArray[np.int64]:
    """`run_lengths(...)`'s column back."""
    if len(packed) == 2:
        return np.full(packed[1], packed[0], dtype=np.int64)
    values = np.asarray(packed[0::2], dtype=np.int64)
    return np.repeat(values, np.asarray(packed[1::2], dtype=np.intp))


def pack(result: PodShardResult, position: Mapping[str, int]) -> PodShardResult:
    """`result` with its feasible nodes, score columns and failures packed; `position`: the view's
    node name → position (every node the result names must be in it)."""
    if result.feasible_at or result.score_runs or not (result.feasible or result.failures):
        return result
    return msgspec.structs.replace(
        result, feasible=[], feasible_at=runs(_positions(result.feasible, position)),
        scores={}, score_runs={p: run_lengths(np.asarray(c, dtype=np.int64)) for p, c in result.scores.items()},
        failures=[msgspec.structs.replace(f, nodes=[], at=runs(_positions(f.nodes, position)))
                  for f in result.failures],
    )


def pack_walk(result: PodShardResult, feasible: Positions, columns: Mapping[str, npt.NDArray[np.int64]],
              failures: Sequence[tuple[NodeFailure, Positions]]) -> PodShardResult:
    """`result` (its feasible nodes, scores and failures left empty) with an indexed walk's answer
    packed straight from positions: the walk's `feasible` positions in walk order, each plugin's
    raw `columns` aligned with them, and each failure with its nodes' positions in walk order."""
    return msgspec.structs.replace(
        result, feasible_at=runs(feasible),
        score_runs=columns_run_lengths(columns),
        failures=[msgspec.structs.replace(f, at=runs(at)) for f, at in failures],
    )


def _positions(nodes: Sequence[str], position: Mapping[str, int]) -> Positions:
    return np.fromiter((position[n] for n in nodes), dtype=np.intp, count=len(nodes))
