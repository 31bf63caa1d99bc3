"""Deciding one PreemptionRequested on a cluster view: the preemption service runs this on its
live view, replay on the view rebuilt from the log."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from shared.cluster import ClusterView, point_at
from shared.events import PreemptionRequested
from shared.events.topics import NODES
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import PreFilterResult
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.indexes.node_index import NodeIndexes, WalkError, filters_after_index

from .packed_failures import RejectionsMemo, unpack_failures


@dataclass
class PreemptionOutcome:
    nominated: str
    message: str
    victims: list[PodInfo] = field(default_factory=list)
    nominations_to_clear: list[PodInfo] = field(default_factory=list)
    clear_own: bool = False
    """No node was nominated and the preemptor had a nomination: it is cleared."""
    attempted: bool = True
    """PostFilter ran (upstream counts scheduler_preemption_attempts_total then), a candidate
    needing no victims (`fits`) included."""
    fits: str = ""
    """A node the pod fits on now, on a view that moved on since the attempt: nobody is evicted,
    and the pod is nominated there."""


def fits_now_message(node: str) -> str:
    return f'preemption: not needed, the pod fits on node "{node}" now'


def stale_message(view: ClusterView, uid: str) -> str:
    """Why a request needs no preemption any more: the view has the pod placed (bound, or
    assumed by a later attempt) or deleted; "" when it is still pending. Nobody is evicted for
    such a pod."""
    if uid in view.deleted:
        return "preemption: not needed, the pod was deleted"
    node = view.node_of(uid)
    return f'preemption: not needed, the pod was placed on node "{node}"' if node else ""


def decide_preemption(fwk: Framework | None, view: ClusterView, req: PreemptionRequested,
                      *, moved: bool = False, indexes: NodeIndexes | None = None,
                      memo: RejectionsMemo | None = None) -> PreemptionOutcome:
    """PostFilter (DefaultPreemption) for the request's pod over `view`, its candidate offset drawn
    from the attempt's seed; the request's per-node statuses are the failed attempt's.

    `moved`: the view is not the attempt's (events past its watermark, or other preemptions still
    in flight, are in it). Pods freed or nominations made since may have made room for this pod
    already; a scheduler deciding one pod at a time would then place it without evicting anyone,
    so nobody is evicted for it: the pod is nominated to the first node it fits and retried.
    `indexes`: that check reads the pod spec's node index (the same answer). `memo`: the last
    request's packed failures as read (the same statuses)."""
    if fwk is None:
        return PreemptionOutcome("", "no profile serves this pod", attempted=False)
    stale = stale_message(view, req.pod.metadata.uid)
    if stale:
        return PreemptionOutcome("", stale, attempted=False)
    pod = PodInfo(req.pod)
    point_at([fwk], view)
    fwk.set_pod_disruption_budgets(list(view.pdbs.values()))
    rng = random.Random(req.seed)
    for plugin in fwk.plugins.values():
        if hasattr(plugin, "rng"):
            plugin.rng = rng
    state = CycleState()
    pre, pre_status, _ = fwk.run_pre_filter_plugins(state, pod)
    if moved and (pre_status is None or pre_status.is_success()):
        node = _first_fitting(fwk, state, pod, pre, indexes)
        if node:
            # Upstream picks a candidate that needs no victims first and nominates it like any
            # other: the room stays the pod's until it is retried.
            clear = [p for p in fwk.nominator().nominated_pods_for_node(node) if p.priority < pod.priority]
            return PreemptionOutcome(node, fits_now_message(node), nominations_to_clear=clear, fits=node)
    statuses = _attempt_statuses(fwk, state, pod, view, req, pre, pre_status, memo)
    result, status = fwk.run_post_filter_plugins(state, pod, statuses)
    nominated = result.nominated_node_name if result is not None and status.code == Code.SUCCESS else ""
    if nominated and result is not None:
        return PreemptionOutcome(nominated, status.message(), list(result.victims), list(result.nominations_to_clear))
    clear_own = result is not None and not result.nominated_node_name and bool(req.pod.status.nominated_node_name)
    return PreemptionOutcome("", status.message(), clear_own=clear_own)


def _attempt_statuses(fwk: Framework, state: CycleState, pod: PodInfo, view: ClusterView, req: PreemptionRequested,
                      pre: PreFilterResult | None, pre_status: Status | None,
                      memo: RejectionsMemo | None = None) -> Mapping[str, Status]:
    """The failed attempt's per-node statuses. Packed ones are positions in the node order at the
    request's watermark: on a view whose nodes moved past it they cannot be read, and each node's
    status is taken afresh on the view instead (the one the decision is made on)."""
    snapshot = fwk.snapshot()
    if not any(f.at for f in req.node_statuses) or not _nodes_moved(view, req.watermark):
        return unpack_failures(req.node_statuses, snapshot, memo)
    if pre_status is not None and not pre_status.is_success():
        return dict.fromkeys(snapshot.names, pre_status)
    run = fwk.node_filter()
    out: dict[str, Status] = {}
    for info in _prefiltered(snapshot, pre):  # the others are absent, as in the attempt
        status = run(state, pod, info)
        if status is not None and not status.is_success():
            out[info.name] = status
    return out


def _prefiltered(snapshot: Snapshot, pre: PreFilterResult | None) -> Iterator[NodeInfo]:
    """The snapshot's nodes that PreFilter left to Filter, in order."""
    keep = pre.node_names if pre is not None else None
    return iter(snapshot.node_info_list) if keep is None else (i for i in snapshot.node_info_list if i.name in keep)


def folded_past(folded: Mapping[str, list[int]], watermark: Mapping[str, list[int]]) -> bool:
    """Whether a decision's recorded positions are beyond the request's watermark anywhere: the
    view had moved on (positions short of it everywhere mean the wait for it ran out)."""
    for topic, offsets in folded.items():
        mark = watermark.get(topic, [])
        if any(o > (mark[p] if p < len(mark) else 0) for p, o in enumerate(offsets)):
            return True
    return False


def _nodes_moved(view: ClusterView, watermark: Mapping[str, list[int]]) -> bool:
    """Whether `view` has folded node events past the watermark's."""
    nodes = watermark.get(NODES)
    return nodes is not None and view.watermark({NODES: len(nodes)})[NODES] != nodes


def _first_fitting(fwk: Framework, state: CycleState, pod: PodInfo, pre: PreFilterResult | None,
                   indexes: NodeIndexes | None = None) -> str:
    """The first node (in snapshot order) that passes Filter with the nominated pods, or ""."""
    snapshot = fwk.snapshot()
    if indexes is not None and (pre is None or pre.all_nodes()) and snapshot.num_nodes():
        rest = filters_after_index(fwk, state, pod)
        if rest is not None:
            index = indexes.get(fwk, pod, snapshot)
            try:
                if not rest:
                    at = index.first_fit(fwk, state, pod)
                    return index.names[at] if at >= 0 else ""
                walked = index.walk(fwk, state, pod, 0, 1, rest)
            except WalkError:
                pass  # a node answered Error: the walk below passes over it
            else:
                return index.names[int(walked.feasible[0])] if len(walked.feasible) else ""
    run = fwk.node_filter()
    for info in _prefiltered(snapshot, pre):
        status = run(state, pod, info)
        if status is None or status.is_success():
            return info.name
    return ""
