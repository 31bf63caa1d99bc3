"""FitError and Diagnosis: why no node fits, worded exactly as upstream's FitError.Error()."""

from __future__ import annotations

from collections import Counter

from shared.framework.status import REJECTED_CODES, Status

NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


class Diagnosis:
    """Per-node rejection statuses, plus the nodes' status when PreFilter ruled them out wholesale."""

    __slots__ = ("node_to_status", "absent_nodes_status", "unschedulable_plugins", "pending_plugins",
                 "pre_filter_msg", "post_filter_msg")

    def __init__(self) -> None:
        self.node_to_status: dict[str, Status] = {}
        self.absent_nodes_status: Status | None = None
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.pre_filter_msg = ""
        self.post_filter_msg = ""

    def add_node_statuses(self, statuses: list[tuple[str, Status]]) -> None:
        """Each node's failing Filter status, in walk order, with `add_plugin_status` for each."""
        self.node_to_status.update(statuses)
        kinds = {(s.plugin, s.code) for _, s in statuses}  # few, however many nodes
        self.unschedulable_plugins.update(p for p, code in kinds if p and code in REJECTED_CODES)

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
            for reasons, n in Counter(status.reasons for status in d.node_to_status.values()).items():
                for reason in reasons:
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
