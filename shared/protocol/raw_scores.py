"""The shards' raw (not yet normalized) scores of one pod, kept as one int64 column per plugin.

The queue finishes scores over hundreds of feasible nodes per pod; reading a plugin's column for
them is one array operation, and where the merged walk's feasible nodes are exactly the nodes the
shards answered for, in the same order (one filter worker), not even a name lookup. It is also the
plugin → node → score mapping that explain and replay's reports read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from .answers import Walk

Column = npt.NDArray[np.int64]


class RawScores(Mapping[str, Mapping[str, int]]):
    """Plugin → column of raw scores aligned with `names`; a node or plugin not answered for
    scores 0, as a missing entry of the mapping does for its readers."""

    __slots__ = ("names", "columns", "_absent", "_index", "_dicts")

    def __init__(self, names: Sequence[str], columns: Mapping[str, Column],
                 absent: Mapping[str, npt.NDArray[np.bool_]] | None = None) -> None:
        self.names = names
        self.columns = columns
        self._absent = absent or {}
        """Per plugin some shard did not score for: its nodes (read as 0, left out of the mapping)."""
        self._index: dict[str, int] | None = None
        self._dicts: dict[str, dict[str, int]] = {}

    @classmethod
    def of(cls, walks: Sequence[Walk]) -> RawScores:
        """The scored walks' columns, one after another (shards answer for disjoint nodes); their
        feasible nodes named."""
        if len(walks) == 1:
            return cls(walks[0].feasible, walks[0].columns)
        plugins = list(dict.fromkeys(p for w in walks for p in w.columns))
        names = [n for w in walks for n in w.feasible]
        columns = {p: np.concatenate([w.columns[p] if p in w.columns else np.zeros(len(w.feasible), dtype=np.int64)
                                      for w in walks])
                   for p in plugins}
        absent = {p: np.concatenate([np.full(len(w.feasible), p not in w.columns) for w in walks])
                  for p in plugins if any(p not in w.columns and w.feasible for w in walks)}
        return cls(names, columns, absent)

    @classmethod
    def of_mapping(cls, raw: Mapping[str, Mapping[str, int]]) -> RawScores:
        if isinstance(raw, RawScores):
            return raw
        names = list(dict.fromkeys(n for column in raw.values() for n in column))
        return cls(names, {p: np.fromiter((column.get(n, 0) for n in names), dtype=np.int64, count=len(names))
                           for p, column in raw.items()})

    def rows(self, nodes: Sequence[str]) -> npt.NDArray[np.intp] | None:
        """Each node's row (-1: not answered for); None when `nodes` are the rows, in order."""
        if nodes == self.names:
            return None
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.names)}
        get = self._index.get
        return np.fromiter((get(n, -1) for n in nodes), dtype=np.intp, count=len(nodes))

    def column(self, plugin: str, rows: npt.NDArray[np.intp] | None, count: int) -> Column:
        """Plugin's raw scores at `rows` (`rows(...)`'s answer for `count` nodes), 0 where absent."""
        column = self.columns.get(plugin)
        if column is None or not len(column):
            return np.zeros(count, dtype=np.int64)
        if rows is None:
            return column
        return np.where(rows >= 0, column[rows], 0)

    # -- Mapping: plugin → node → raw score ---------------------------------------------------
    def __getitem__(self, plugin: str) -> Mapping[str, int]:
        kept = self._dicts.get(plugin)
        if kept is None:
            pairs: Iterable[tuple[str, int]] = zip(self.names, self.columns[plugin].tolist())
            absent = self._absent.get(plugin)
            if absent is not None:
                pairs = (pair for pair, gone in zip(pairs, absent.tolist()) if not gone)
            kept = self._dicts[plugin] = dict(pairs)
        return kept

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)


NO_SCORES = RawScores((), {})
