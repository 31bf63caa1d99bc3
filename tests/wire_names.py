"""Shard answers with every node named and every score column plain: the form a packed answer
stands for, which tests merge by name to check the queue's reading of the packed one."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from shared.events import NodeFailure, PodShardResult
from shared.protocol.packing import column_of


def names_at(names: Sequence[str], packed: Sequence[int]) -> list[str]:
    """The names of `runs(...)`'s positions, in order."""
    out: list[str] = []
    for k in range(0, len(packed), 2):
        first = packed[k]
        out.extend(names[first:first + packed[k + 1]])
    return out


def unpack(result: PodShardResult, names: Sequence[str]) -> PodShardResult:
    """`result` with node names and plain score columns (an unpacked result is returned as is);
    `names`: the view's nodes in order, as at the request's watermark."""
    if not (result.feasible_at or result.score_runs or any(f.at for f in result.failures)):
        return result
    return msgspec.structs.replace(
        result, feasible=names_at(names, result.feasible_at), feasible_at=[],
        scores={p: column_of(c).tolist() for p, c in result.score_runs.items()} or result.scores, score_runs={},
        failures=[_named(f, names) for f in result.failures],
    )


def _named(failure: NodeFailure, names: Sequence[str]) -> NodeFailure:
    if not failure.at or failure.nodes:
        return failure
    return msgspec.structs.replace(failure, nodes=names_at(names, failure.at), at=[])
