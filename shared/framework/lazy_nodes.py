"""A sequence of NodeInfos built only when someone reads past its length.

An attempt hands its feasible nodes (500 of 5,000) to PreScore, and most PreScore plugins look at
the pod alone; where the nodes come from an index or a list of names, building the list costs more
than the plugins that never read it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload

from .node_info import NodeInfo


class LazyNodes(Sequence[NodeInfo]):
    __slots__ = ("_count", "_build", "_infos")

    def __init__(self, count: int, build: Callable[[], list[NodeInfo]]) -> None:
        """`build()` must give exactly `count` nodes."""
        self._count, self._build = count, build
        self._infos: list[NodeInfo] | None = None

    def _list(self) -> list[NodeInfo]:
        if self._infos is None:
            self._infos = self._build()
        return self._infos

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, i: slice) -> list[NodeInfo]: ...

    def __getitem__(self, i: int | slice) -> NodeInfo | list[NodeInfo]:
        return self._list()[i]

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self._list())
