"""Per-attempt plugin state, keyed `"PreFilter" + NAME` by convention.

Written once in PreFilter/PreScore, read many times in Filter/Score, and cloned for
preemption's what-ifs: every value stored must offer `clone()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    from .node_info import NodeInfo
    from .pod_info import PodInfo
    from .status import Status

NodeMemo: TypeAlias = "dict[str, tuple[int, Any]]"
"""Node name -> (the node's generation, a result remembered for it)."""
FilterStep: TypeAlias = "tuple[str, Callable[[CycleState, PodInfo, NodeInfo], Status | None], NodeMemo | None]"
"""A filter a cycle runs: its name, its bound Filter method, its remembered verdicts if node-local."""
FilterChain: TypeAlias = "tuple[NodeMemo, tuple[FilterStep, ...], tuple[FilterStep, ...]]"
"""The leading node-local filters as one: their remembered verdicts, those filters, the filters after them."""


class StateData(Protocol):
    def clone(self) -> StateData: ...


class CycleState:
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins", "record_plugin_metrics", "filters",
                 "filter_chain", "record_scores", "extensions")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.record_plugin_metrics = False
        # The filters this cycle runs, fixed once PreFilter is done.
        self.filters: tuple[FilterStep, ...] | None = None
        self.filter_chain: FilterChain | None = None
        # Keep every plugin's score per node (for explain); totals alone otherwise.
        self.record_scores = False
        # (name, PreFilterExtensions) of the plugins whose state follows added/removed pods.
        self.extensions: tuple[tuple[str, Any], ...] | None = None

    def read(self, key: str) -> Any:
        """The value stored under key; KeyError when absent (plugins turn that into an Error status)."""
        return self._data[key]

    def get(self, key: str) -> Any | None:
        return self._data.get(key)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        copy = CycleState()
        copy._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        copy.filters = self.filters
        copy.filter_chain = self.filter_chain
        copy.record_scores = self.record_scores
        copy.extensions = self.extensions
        return copy
