"""One score plugin's column over many nodes, finished as upstream's RunScorePlugins finishes it:
NormalizeScore, the range check, the weight. Columns are int64 arrays, so a pod scored on
hundreds of nodes costs a few array operations per plugin, not a Python loop per node."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from .cycle_state import CycleState
from .interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore, ScoreExtensions
from .pod_info import PodInfo
from .status import Code, Status

Column = npt.NDArray[np.int64]


def weighted_column(name: str, ext: ScoreExtensions | None, weight: int, state: CycleState, pod: PodInfo,
                    names: Callable[[], Sequence[str]], column: Column) -> Column | Status:
    """Plugin `name`'s raw `column` normalized (over exactly these nodes, as upstream), checked for
    range and weighted; or the Error status. `names()` gives the nodes' names, asked only when a
    NormalizeScore other than the default one needs NodeScore objects."""
    if ext is not None:
        normalized = _normalized(ext, state, pod, names, column)
        if isinstance(normalized, Status):
            return wrap_error(f"running Normalize on Score plugin {name!r}", normalized, name)
        column = normalized
    if len(column) and (column.max() > MAX_NODE_SCORE or column.min() < MIN_NODE_SCORE):
        return invalid_score(name, column.tolist())
    return column * weight if weight != 1 else column


def _normalized(ext: ScoreExtensions, state: CycleState, pod: PodInfo, names: Callable[[], Sequence[str]],
                column: Column) -> Column | Status:
    default = ext.DEFAULT_NORMALIZE
    if default is not None:
        return default_normalize(default[0], default[1], column)
    scores = [NodeScore(n, v) for n, v in zip(names(), column.tolist())]
    s = ext.normalize_score(state, pod, scores)
    if s is not None and not s.is_success():
        return s
    return np.fromiter((ns.score for ns in scores), dtype=np.int64, count=len(scores))


def default_normalize(max_priority: int, reverse: bool, column: Column) -> Column:
    """helper.DefaultNormalizeScore over an array (see tainttoleration.helpers.default_normalize_score):
    scale by the highest positive score with Go's truncating division; a zero maximum leaves the
    scores alone, or gives every node max_priority when reversed."""
    highest = int(column.max()) if len(column) else 0
    if highest <= 0:
        return np.full(len(column), max_priority, dtype=np.int64) if reverse else column
    scaled = np.sign(column) * (np.abs(max_priority * column) // highest)
    return max_priority - scaled if reverse else scaled


def invalid_score(plugin: str, values: Sequence[int]) -> Status:
    """The Error for a normalized score column with a value outside [MIN_NODE_SCORE, MAX_NODE_SCORE]."""
    bad = next(v for v in values if v > MAX_NODE_SCORE or v < MIN_NODE_SCORE)
    msg = (f"plugin {plugin!r} returns an invalid score {bad}, it should in the range of "
           f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing")
    return Status(Code.ERROR, msg, plugin=plugin)


def wrap_error(context: str, s: Status, plugin: str) -> Status:
    error = s.error or RuntimeError(s.message())
    return Status(Code.ERROR, f"{context}: {s.message()}", plugin=plugin, error=error)
