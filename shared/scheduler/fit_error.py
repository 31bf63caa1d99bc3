"""FitError and Diagnosis: why no node fits, worded exactly as upstream's FitError.Error()."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence

from shared.framework.node_info import NodeInfo
from shared.framework.status import REJECTED_CODES, Code, Status
from shared.indexes.rejections import Indexes, Rejections

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


class NodeToStatus(MutableMapping[str, Status]):
    """Node name -> the status that rejected it. An indexed walk's `Rejections` stay arrays
    until the mapping is iterated or changed; counting reasons and finding the nodes with a code
    read the arrays."""

    __slots__ = ("_statuses", "_rejections")

    def __init__(self, statuses: dict[str, Status] | None = None) -> None:
        self._statuses: dict[str, Status] = statuses if statuses is not None else {}
        self._rejections: Rejections | None = None

    def writable(self) -> dict[str, Status]:
        """The plain dict behind the mapping, for loops that add many entries."""
        if self._rejections is not None:
            pairs, self._rejections = self._rejections.pairs(), None
            self._statuses = dict(pairs) | self._statuses
        return self._statuses

    def add_rejections(self, rejections: Rejections) -> None:
        if self._statuses or self._rejections is not None:
            self.writable().update(rejections.pairs())
        else:
            self._rejections = rejections

    def __getitem__(self, name: str) -> Status:
        status = self.get(name)
        if status is None:
            raise KeyError(name)
        return status

    def get(  # type: ignore[override]  # Mapping.get's two overloads as one signature
        self, name: str, default: Status | None = None
    ) -> Status | None:
        if self._rejections is not None:
            status = self._rejections.get(name)
            return default if status is None else status
        return self._statuses.get(name, default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __setitem__(self, name: str, status: Status) -> None:
        self.writable()[name] = status

    def __delitem__(self, name: str) -> None:
        del self.writable()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.writable())

    def __len__(self) -> int:
        return len(self._rejections) if self._rejections is not None else len(self._statuses)

    def status_counts(self) -> Iterable[tuple[Status, int]]:
        """Each distinct status (equal code, reasons and plugin) with how many nodes have it."""
        if self._rejections is not None:
            return self._rejections.counts()
        first: dict[tuple[Code, tuple[str, ...], str], Status] = {}
        counts: Counter[tuple[Code, tuple[str, ...], str]] = Counter()
        for status in self._statuses.values():
            key = (status.code, status.reasons, status.plugin)
            first.setdefault(key, status)
            counts[key] += 1
        return [(first[key], n) for key, n in counts.items()]

    def positions_with_code(self, code: Code, all_nodes: Sequence[NodeInfo]) -> Indexes | None:
        """The positions in `all_nodes` (ascending) of the nodes whose status has `code`, or None
        when the statuses are not kept as positions into that very list."""
        r = self._rejections
        return r.positions_with_code(code) if r is not None and r.nodes is all_nodes else None

    def position_groups(self, names: list[str]) -> list[tuple[Status, Indexes]] | None:
        """Each distinct status with its nodes as positions in the node order `names`, or None when
        the statuses are not kept as positions into that order (a later view with the same nodes
        in the same order will do: its positions are the same)."""
        r = self._rejections
        return r.position_groups() if r is not None and (r.names is names or r.names == names) else None

    def nodes_with_code(self, code: Code, all_nodes: Sequence[NodeInfo]) -> list[NodeInfo]:
        """The nodes of `all_nodes`, in its order, whose status has `code`."""
        r = self._rejections
        if r is not None and r.nodes is all_nodes:  # positions into the very list asked about
            return [all_nodes[p] for p in r.positions_with_code(code).tolist()]
        get = self.get
        return [n for n in all_nodes if (s := get(n.name)) is not None and s.code == code]


class Diagnosis:
    """Per-node rejection statuses, plus the nodes' status when PreFilter ruled them out wholesale."""

    __slots__ = ("_node_to_status", "absent_nodes_status", "unschedulable_plugins", "pending_plugins",
                 "pre_filter_msg", "post_filter_msg")

    def __init__(self) -> None:
        self._node_to_status = NodeToStatus()
        self.absent_nodes_status: Status | None = None
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.pre_filter_msg = ""
        self.post_filter_msg = ""

    @property
    def node_to_status(self) -> NodeToStatus:
        return self._node_to_status

    @node_to_status.setter
    def node_to_status(self, statuses: Mapping[str, Status]) -> None:
        self._node_to_status = statuses if isinstance(statuses, NodeToStatus) else NodeToStatus(dict(statuses))

    def add_rejections(self, rejections: Rejections) -> None:
        """Each node's failing Filter status, in walk order, with `add_plugin_status` for each."""
        self.node_to_status.add_rejections(rejections)
        self.unschedulable_plugins.update(s.plugin for s, _ in rejections.counts()
                                          if s.plugin and s.code in REJECTED_CODES)

    def add_plugin_status(self, status: Status) -> None:
        if not status.plugin:
            return
        if status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)


def _go_sort_key(s: str) -> bytes:
    """Go's sort.Strings orders by bytes."""
    return s.encode()


class FitError(Exception):
    """No node fits the pod."""

    def __init__(self, pod_key: str, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__(pod_key)
        self.pod_key = pod_key
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def message(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            histogram: dict[str, int] = {}
            for status, n in d.node_to_status.status_counts():
                for reason in status.reasons:
                    histogram[reason] = histogram.get(reason, 0) + n
            absent = self.num_all_nodes - len(d.node_to_status)
            if absent > 0 and d.absent_nodes_status is not None:
                for reason in d.absent_nodes_status.reasons:
                    histogram[reason] = histogram.get(reason, 0) + absent
            parts = sorted((f"{n} {reason}" for reason, n in histogram.items()), key=_go_sort_key)
            if parts:
                msg += f" {', '.join(parts)}."
        if d.post_filter_msg:
            # No period of its own: preemption's message is itself a FitError ending in one.
            msg += f" {d.post_filter_msg}"
        return msg

    def __str__(self) -> str:
        return self.message()


class NoNodesAvailable(Exception):
    def __str__(self) -> str:
        return NO_NODES_AVAILABLE
