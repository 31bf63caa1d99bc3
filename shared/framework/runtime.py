"""The framework runtime: runs a profile's plugins at each extension point (upstream frameworkImpl)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .cycle_state import CycleState
from .interfaces import (
    BindPlugin,
    FilterPlugin,
    NodePluginScores,
    PermitPlugin,
    PluginScore,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from .node_info import NodeInfo
from .pod_info import PodInfo
from .score_columns import Column, invalid_score, weighted_column, wrap_error
from .status import Code, Status, as_status

if TYPE_CHECKING:
    from .interfaces import Plugin, PodNominator
    from .snapshot import Snapshot


MEMO_SIGNATURES = 4  # distinct pod specs whose node-local results are kept
NOMINATED_COPIES = 1024
"""The most nodes a framework keeps a copy with nominated pods of (`Framework._node_with`)."""


class _NoNominations:
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return []


class Framework:
    """One profile's plugins per extension point, and the rules for running them."""

    def __init__(
        self,
        profile_name: str,
        points: Mapping[str, Sequence[Plugin]],
        score_weights: Mapping[str, int],
        percentage_of_nodes_to_score: int | None = None,
    ) -> None:
        self.profile_name = profile_name
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self._snapshot: Snapshot | None = None
        self._nominator: PodNominator = _NoNominations()
        self._pdbs: list[Any] = []
        self._extenders: list[Any] = []
        # Results of node-local plugins per pod signature: "filter:NAME", "chain:NAMES" and
        # "scores:NAMES" -> NodeMemo (for snapshot-local scores, (snapshot serial, NodeMemo)), and
        # "plan:SKIPPED" -> (filters, filter chain).
        self.memoize = True
        self._memo: OrderedDict[bytes, dict[str, Any]] = OrderedDict()
        self._with_nominated: dict[str, tuple[tuple[int, ...], NodeInfo]] = {}
        """Node name -> (the node's generation and its counted nominated pods, the node with them
        added): the last such copy per node, for the next pod that counts the same pods."""
        self.install(points, score_weights)

    def install(self, points: Mapping[str, Sequence[Plugin]], score_weights: Mapping[str, int]) -> None:
        """Set the plugins per extension point (config field names: "preFilter", "filter", …).
        Plugins are built with this framework as their handle, so they are installed afterwards."""
        self.score_weights = dict(score_weights)
        self.plugins: dict[str, Plugin] = {}
        for plugins in points.values():
            for p in plugins:
                self.plugins[p.name] = p

        def of(point: str, kind: type) -> list[Any]:
            return [p for p in points.get(point, ()) if isinstance(p, kind)]

        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = of("preEnqueue", PreEnqueuePlugin)
        sorts: list[QueueSortPlugin] = of("queueSort", QueueSortPlugin)
        self.queue_sort_plugin: QueueSortPlugin | None = sorts[0] if sorts else None
        self.pre_filter_plugins: list[PreFilterPlugin] = of("preFilter", PreFilterPlugin)
        self.filter_plugins: list[FilterPlugin] = of("filter", FilterPlugin)
        self.post_filter_plugins: list[PostFilterPlugin] = of("postFilter", PostFilterPlugin)
        self.pre_score_plugins: list[PreScorePlugin] = of("preScore", PreScorePlugin)
        self.score_plugins: list[ScorePlugin] = of("score", ScorePlugin)
        self.reserve_plugins: list[ReservePlugin] = of("reserve", ReservePlugin)
        self.permit_plugins: list[PermitPlugin] = of("permit", PermitPlugin)
        self.pre_bind_plugins: list[PreBindPlugin] = of("preBind", PreBindPlugin)
        self.bind_plugins: list[BindPlugin] = of("bind", BindPlugin)
        self.post_bind_plugins: list[PostBindPlugin] = of("postBind", PostBindPlugin)
        # The PreFilter and Filter plugins whose verdicts may read more than the pod and the node.
        self._checks_beyond_node: tuple[Plugin, ...] = tuple(
            {p.name: p for p in (*self.pre_filter_plugins, *self.filter_plugins) if not p.NODE_LOCAL}.values())
        self._pre_scores_beyond_pod = tuple(p for p in self.pre_score_plugins if not p.NODE_LOCAL)

    # -- the Handle plugins see -------------------------------------------------------------
    def set_snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def snapshot(self) -> Snapshot:
        assert self._snapshot is not None, "the framework has no snapshot yet"
        return self._snapshot

    def set_nominator(self, nominator: PodNominator) -> None:
        self._nominator = nominator

    def nominator(self) -> PodNominator:
        return self._nominator

    def set_pod_disruption_budgets(self, pdbs: list[Any]) -> None:
        self._pdbs = pdbs

    def pod_disruption_budgets(self) -> list[Any]:
        return self._pdbs

    def set_extenders(self, extenders: list[Any]) -> None:
        self._extenders = extenders

    def extenders(self) -> list[Any]:
        return self._extenders

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def pre_score_reads_nodes(self, pod: PodInfo) -> bool:
        """Whether any PreScore plugin's outcome depends on which nodes passed Filter."""
        return any(pl.pre_score_reads_nodes(pod) for pl in self.pre_score_plugins)

    # -- PreFilter --------------------------------------------------------------------------
    def run_pre_filter_plugins(
        self, state: CycleState, pod: PodInfo
    ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """The merged PreFilterResult, the failing status, and the plugins that narrowed the nodes."""
        nodes = self.snapshot().node_info_list
        result: PreFilterResult | None = None
        with_nodes: set[str] = set()
        skip: set[str] = set()
        state.skip_filter_plugins = skip  # recorded on every return, as upstream's deferred set
        returned: Status | None = None
        for pl in self.pre_filter_plugins:
            r, s = pl.pre_filter(state, pod, nodes)
            if s is not None and s.code == Code.SKIP:
                skip.add(pl.name)
                continue
            if s is not None and not s.is_success():
                s.plugin = pl.name
                if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, s, set()
                if s.code == Code.UNSCHEDULABLE:
                    # Keep running the others: preemption later in this cycle needs their state.
                    returned = s
                    continue
                return None, wrap_error(f"running PreFilter plugin {pl.name!r}", s, pl.name), set()
            if r is not None and not r.all_nodes():
                with_nodes.add(pl.name)
            result = r if result is None else result.merge(r)
            if result is not None and not result.all_nodes() and not result.node_names:
                names = sorted(with_nodes)
                if len(names) == 1:
                    msg = f"node(s) didn't satisfy plugin {names[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) {_go_list(names)} simultaneously"
                return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), with_nodes
        return result, returned, with_nodes

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extension("AddPod", state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._run_pre_filter_extension("RemovePod", state, pod, pod_to_remove, node_info)

    def _run_pre_filter_extension(
        self, op: str, state: CycleState, pod: PodInfo, other: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Update every PreFilter plugin's state for a pod added to (or removed from) a node."""
        extensions = state.extensions
        if extensions is None:
            skip = state.skip_filter_plugins
            extensions = state.extensions = tuple(
                (pl.name, ext) for pl in self.pre_filter_plugins
                if pl.name not in skip and (ext := pl.pre_filter_extensions()) is not None
            )
        for name, ext in extensions:
            run = ext.add_pod if op == "AddPod" else ext.remove_pod
            s = run(state, pod, other, node_info)
            if s is not None and not s.is_success():
                return wrap_error(f"running {op} on PreFilter plugin {name!r}", s, name)
        return None

    # -- Filter -----------------------------------------------------------------------------
    def _memo_for(self, pod: PodInfo) -> dict[str, Any] | None:
        if not self.memoize:
            return None
        sig = pod.signature()
        memo = self._memo.get(sig)
        if memo is None:
            memo = self._memo[sig] = {}
            if len(self._memo) > MEMO_SIGNATURES:
                self._memo.popitem(last=False)
        else:
            self._memo.move_to_end(sig)
        return memo

    def _filters_for(self, state: CycleState, pod: PodInfo) -> tuple[tuple[str, Any, Any], ...]:
        skip = state.skip_filter_plugins
        memo = self._memo_for(pod)
        # The plan (which filters run, and their remembered verdicts) is the same for every cycle
        # of the pod's spec that skips the same plugins.
        plan_key = "plan:" + ",".join(sorted(skip)) if memo is not None else ""
        plan: Any = memo.get(plan_key) if memo is not None else None
        if plan is not None:
            state.filters, state.filter_chain = plan
            return plan[0]
        filters = tuple(
            (pl.name, pl.filter,
             memo.setdefault("filter:" + pl.name, {}) if memo is not None and pl.NODE_LOCAL else None)
            for pl in self.filter_plugins if pl.name not in skip
        )
        state.filters = filters
        local = 0
        while local < len(filters) and filters[local][2] is not None:
            local += 1
        if local >= 2 or (local and local == len(filters)):
            # The node-local filters that come first are remembered as one: a node costs one
            # lookup for them (their verdict is as node-local as each of them), then the rest run.
            prefix = filters[:local]
            assert memo is not None  # a filter is remembered only when there is a memo
            remembered = memo.setdefault("chain:" + ",".join(name for name, _, _ in prefix), {})
            state.filter_chain = (remembered, prefix, filters[local:])
        if memo is not None:
            memo[plan_key] = (filters, state.filter_chain)
        return filters

    def filters_after_node_local(self, state: CycleState, pod: PodInfo) -> tuple[Any, ...] | None:
        """The Filter plugins this cycle runs after its leading node-local ones, which are
        remembered together (`run_node_local_filters`): empty when every filter is node-local,
        None when there is no such leading group (PreFilter must have run on `state`)."""
        if not self.memoize:
            return None
        if state.filters is None:
            self._filters_for(state, pod)
        chain = state.filter_chain
        return None if chain is None else chain[2]

    def run_node_local_filters(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        """The leading node-local filters' verdict (`filters_after_node_local` must not be None)."""
        assert state.filter_chain is not None
        remembered, prefix, _ = state.filter_chain
        hit = remembered.get(node_info.name)
        if hit is not None and hit[0] == node_info.generation:
            return hit[1]
        s = self.run_filters(prefix, state, pod, node_info)
        if s is None or s.is_rejected():
            remembered[node_info.name] = (node_info.generation, s)
        return s

    def score_plugins_if_node_local(self, state: CycleState, pod: PodInfo) -> list[ScorePlugin] | None:
        """The score plugins this cycle runs when each one's raw score depends only on the pod and
        the node (or the snapshot's fixed indexes), and PreScore does not read the feasible set;
        None otherwise (PreScore must have run on `state`)."""
        if not self.memoize or self.pre_score_reads_nodes(pod):
            return None
        active = [pl for pl in self.score_plugins if pl.name not in state.skip_score_plugins]
        if not all(pl.NODE_LOCAL or pl.SNAPSHOT_LOCAL for pl in active):
            return None
        return active

    def nominated_node_names(self) -> Collection[str] | None:
        """The nodes some pod is nominated to; None when the nominator cannot list them."""
        if not self._has_nominations():
            return ()
        nodes_with = getattr(self._nominator, "nodes_with_nominations", None)
        return None if nodes_with is None else nodes_with()

    def node_filter(self) -> Callable[[CycleState, PodInfo, NodeInfo], Status | None]:
        """What a walk over the nodes calls per node: Filter with nominated pods, or plain Filter
        while no pod is nominated anywhere (the same verdicts, without asking per node)."""
        nominated = self.nominated_node_names()
        if nominated is None:
            return self.run_filter_plugins_with_nominated_pods
        if not nominated:
            return self.run_filter_plugins
        plain, twice = self.run_filter_plugins, self.run_filter_plugins_with_nominated_pods

        def walk(state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
            # Only a node something is nominated to needs the two-pass check.
            return twice(state, pod, node_info) if node_info.name in nominated else plain(state, pod, node_info)
        return walk

    def run_filter_plugins(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        """The first plugin that rejects the node decides its status."""
        filters = state.filters
        if filters is None:
            filters = self._filters_for(state, pod)
        chain = state.filter_chain
        if chain is None or node_info.is_clone:
            return self.run_filters(filters, state, pod, node_info)
        rest = chain[2]
        s = self.run_node_local_filters(state, pod, node_info)
        if s is not None or not rest:
            return s
        return self.run_filters(rest, state, pod, node_info)

    def run_filters(self, filters: tuple[tuple[str, Any, Any], ...], state: CycleState, pod: PodInfo,
                    node_info: NodeInfo) -> Status | None:
        """Some of this cycle's filters, in order (e.g. those `filters_after_node_local` names)."""
        real = not node_info.is_clone
        for name, run, memo in filters:
            if memo is not None and real:
                hit = memo.get(node_info.name)
                if hit is not None and hit[0] == node_info.generation:
                    s = hit[1]
                else:
                    s = run(state, pod, node_info)
                    if s is None or s.is_rejected():
                        memo[node_info.name] = (node_info.generation, s)
            else:
                s = run(state, pod, node_info)
            if s is not None and s.code != Code.SUCCESS:
                if not s.is_rejected():
                    s = wrap_error(f"running {name!r} filter plugin", s, name)
                s.plugin = name
                return s
        return None

    def pre_filter_alike(self, pod: PodInfo) -> bool:
        """Whether PreFilter's outcome for `pod` (its state, skips and verdict) and Filter's on a
        node are its spec's alone on the current snapshot: every PreFilter and Filter plugin
        reads only the pod and the node (`NODE_LOCAL`) or has nothing to check for this pod
        (`checks_nothing_for`). A node that passed the pod's Filter (nominated pods counted) on
        an earlier view then passes it still while its NodeInfo is unchanged and no pod Filter
        would count is nominated to it."""
        return all(pl.checks_nothing_for(pod) for pl in self._checks_beyond_node)

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """Filter twice when the node has nominated pods of equal or higher priority: once with
        them counted as running (the pod must not take their room), once without (filters like
        pod affinity must not rely on pods that may land elsewhere)."""
        counted = self.counted_nominations(pod, node_info.name)
        if not counted:
            return self.run_filter_plugins(state, pod, node_info)
        state_with, info_with = state.clone(), self._node_with(node_info, counted)
        # Upstream adds the pods one by one, each AddPod seeing the node with the pods added so
        # far; every AddPod extension reads only the node's labels, so one copy with all of them serves.
        for pi in counted:
            s = self.run_pre_filter_extension_add_pod(state_with, pod, pi, info_with)
            if s is not None and not s.is_success():
                return s
        status = self.run_filter_plugins(state_with, pod, info_with)
        if status is not None and not status.is_success():
            return status
        return self.run_filter_plugins(state, pod, node_info)

    def _node_with(self, node_info: NodeInfo, counted: list[PodInfo]) -> NodeInfo:
        """A copy of the node with `counted` added, shared by the pods that count the same ones on
        the node as it is (a generation names one content of a node: a copy keeps its source's
        until either changes). Filters read the copy and never change it."""
        key = (node_info.generation, *map(id, counted))  # the copy holds the pods: their ids stay theirs
        kept = self._with_nominated.get(node_info.name)
        if kept is not None and kept[0] == key:
            return kept[1]
        info_with = node_info.clone()
        for pi in counted:
            info_with.add_pod(pi)
        self._with_nominated.pop(node_info.name, None)  # a node copied again goes last, not first, to leave
        self._with_nominated[node_info.name] = (key, info_with)
        if len(self._with_nominated) > NOMINATED_COPIES:  # nodes that had nominations long ago, or left
            del self._with_nominated[next(iter(self._with_nominated))]
        return info_with

    def _has_nominations(self) -> bool:
        try:
            return len(self._nominator) > 0  # type: ignore[arg-type]  # a nominator that cannot count raises TypeError
        except TypeError:
            return True

    def counted_nominations(self, pod: PodInfo, node_name: str) -> list[PodInfo]:
        """The pods nominated to the node that Filter counts as running when it checks `pod`:
        those of equal or higher priority, the pod itself excepted."""
        if not self._has_nominations():
            return []
        return [pi for pi in self._nominator.nominated_pods_for_node(node_name)
                if pi.priority >= pod.priority and pi.uid != pod.uid]

    def nomination_log(self) -> Any:
        """The nominator when it logs its changes by node (see `NominatedPositions`), else None."""
        return self._nominator if hasattr(self._nominator, "changed_since") else None

    def nomination_stamps(self, pod: PodInfo) -> tuple[Mapping[str, int], str | None] | None:
        """The nominator's stamps (node name -> a stamp equal for two reads only when the node's
        nominated pods are the same; absent: none) and the node `pod` itself is nominated to,
        where it counts differently; None when the nominator keeps no stamps."""
        stamps: Mapping[str, int] | None = getattr(self._nominator, "stamps", None)
        if stamps is None:
            return None
        own_node = self._nominator.nominated_node_of(pod.uid)  # type: ignore[attr-defined]  # one with stamps has it
        return stamps, own_node

    def nominations_keys(self, pod: PodInfo) -> Callable[[str], Hashable] | None:
        """For `pod`: node name -> a key equal for two asks only when `counted_nominations`
        would give the same pods there; None when the nominator keeps no stamps (then only the
        pods themselves tell)."""
        stamped = self.nomination_stamps(pod)
        if stamped is None:
            return None
        # The pod itself is never counted: where it is one of the nominated pods, who it is matters.
        stamps, own_node = stamped
        priority, uid = pod.priority, pod.uid

        def key(node_name: str) -> Hashable:
            return stamps.get(node_name, 0), priority, uid if node_name == own_node else ""
        return key

    def counted_nominations_key(self, pod: PodInfo) -> Callable[[str], Hashable]:
        """For `pod`: node name -> a key equal only when the counted nominated pods are the same:
        `nominations_keys` where the nominator stamps, else the counted pods themselves."""
        stamped = self.nominations_keys(pod)
        if stamped is not None:
            return stamped

        def key(node_name: str) -> Hashable:
            return tuple((p.uid, p.signature()) for p in self.counted_nominations(pod, node_name))
        return key

    # -- PostFilter -------------------------------------------------------------------------
    def run_post_filter_plugins(
        self, state: CycleState, pod: PodInfo, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for pl in self.post_filter_plugins:
            r, s = pl.post_filter(state, pod, statuses)
            if s is None or s.is_success():
                return r, s or Status(Code.SUCCESS)
            if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, s.with_plugin(pl.name)
            if not s.is_rejected():
                return None, Status(Code.ERROR, *s.reasons, plugin=pl.name, error=s.error)
            if r is not None and r.nominated_node_name:
                result = r
            reasons.extend(s.reasons)
            if not rejector:
                rejector = pl.name
        return result, Status(Code.UNSCHEDULABLE, *reasons, plugin=rejector)

    # -- PreScore / Score -------------------------------------------------------------------
    def run_pre_score_plugins(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        skip: set[str] = set()
        for pl in self.pre_score_plugins:
            s = pl.pre_score(state, pod, nodes)
            if s is not None and s.code == Code.SKIP:
                skip.add(pl.name)
                continue
            if s is not None and not s.is_success():
                return wrap_error(f"running PreScore plugin {pl.name!r}", s, pl.name)
        state.skip_score_plugins = skip
        return None

    def pre_score_alike(self, pod: PodInfo) -> bool:
        """Whether PreScore's outcome for `pod` (the plugins it skips, an error) is its spec's
        alone on the current snapshot: every PreScore plugin reads only the pod (`NODE_LOCAL`)
        or skips it (`scores_nothing_for`)."""
        return all(pl.scores_nothing_for(pod) for pl in self._pre_scores_beyond_pod)

    def run_score_plugins(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodePluginScores], Status | None]:
        raw, s = self.run_raw_score_plugins(state, pod, nodes)
        if s is not None:
            return [], s
        return self.finish_scores(state, pod, [info.name for info in nodes], raw)

    def run_raw_score_plugins(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[list[tuple[str, list[int]]], Status | None]:
        """Each unskipped score plugin's raw scores for `nodes` (before NormalizeScore), a column
        per plugin in node order: the part of scoring that is per node, which filter shards compute
        for their own nodes.

        The plugins whose score depends only on the pod and the node (and, for the snapshot-local
        ones, on the snapshot's fixed indexes) are remembered together per node, so a node whose
        state has not changed since an identical pod was scored costs one lookup."""
        active = [pl for pl in self.score_plugins if pl.name not in state.skip_score_plugins]
        memo_all = self._memo_for(pod)
        cached = [pl for pl in active if pl.NODE_LOCAL or pl.SNAPSHOT_LOCAL] if memo_all is not None else []
        rest = [pl for pl in active if not (cached and (pl.NODE_LOCAL or pl.SNAPSHOT_LOCAL))]
        columns: dict[str, list[int]] = {}
        if cached:
            key = "scores:" + ",".join(pl.name for pl in cached)
            serial = self._snapshot.serial if self._snapshot is not None else 0
            chain: dict[str, tuple[int, tuple[int, ...]]]
            assert memo_all is not None  # `cached` is empty without a memo
            if any(pl.SNAPSHOT_LOCAL for pl in cached):
                kept = memo_all.get(key)
                if kept is None or kept[0] != serial:
                    kept = memo_all[key] = (serial, {})
                chain = kept[1]
            else:
                chain = memo_all.setdefault(key, {})
            scorers = [(pl.name, pl.score) for pl in cached]
            rows: list[tuple[int, ...]] = []
            for info in nodes:
                real = not info.is_clone
                hit = chain.get(info.name) if real else None
                if hit is not None and hit[0] == info.generation:
                    rows.append(hit[1])
                    continue
                row = []
                for name, score in scorers:
                    value, st = score(state, pod, info)
                    if st is not None and st.code != Code.SUCCESS:
                        return [], wrap_error(f"running Score plugin {name!r}", st, name)
                    row.append(value)
                values = tuple(row)
                if real:
                    chain[info.name] = (info.generation, values)
                rows.append(values)
            for (name, _), scored in zip(scorers, zip(*rows) if rows else [() for _ in scorers]):
                columns[name] = list(scored)
        for pl in rest:
            name, score = pl.name, pl.score
            column: list[int] = []
            for info in nodes:
                value, st = score(state, pod, info)
                if st is not None and st.code != Code.SUCCESS:
                    return [], wrap_error(f"running Score plugin {name!r}", st, name)
                column.append(value)
            columns[name] = column
        return [(pl.name, columns[pl.name]) for pl in active], None

    def finish_scores(
        self, state: CycleState, pod: PodInfo, names: Sequence[str], raw: Sequence[tuple[str, Sequence[int] | Column]]
    ) -> tuple[list[NodePluginScores], Status | None]:
        """NormalizeScore, the range check and weights over raw score columns of `names` (in that
        order); PreScore must have run on `state` for every node named."""
        per_plugin: list[tuple[str, list[int]]] | None = [] if state.record_scores else None
        totals, s = self.finish_totals(state, pod, names, raw, per_plugin)
        if s is not None:
            return [], s
        result = [NodePluginScores(name, [], total) for name, total in zip(names, totals.tolist())]
        for name, values in per_plugin or ():
            for entry, v in zip(result, values):
                entry.scores.append(PluginScore(name, v))
        return result, None

    def finish_totals(
        self, state: CycleState, pod: PodInfo, names: Sequence[str], raw: Sequence[tuple[str, Sequence[int] | Column]],
        per_plugin: list[tuple[str, list[int]]] | None = None,
    ) -> tuple[Column, Status | None]:
        """`finish_scores`' totals alone, in `names` order (a caller that only ranks needs no
        per-node objects); each plugin's weighted column goes to `per_plugin` when given."""
        totals = np.zeros(len(names), dtype=np.int64)
        for name, values in raw:
            column = self.weighted_column(state, pod, names, name, values)
            if isinstance(column, Status):
                return totals[:0], column
            totals += column
            if per_plugin is not None:
                per_plugin.append((name, column.tolist()))
        return totals, None

    def weighted_column(self, state: CycleState, pod: PodInfo, names: Sequence[str], plugin: str,
                        raw: Sequence[int] | Column) -> Column | Status:
        """Score plugin `plugin`'s part of `finish_totals`: its raw column over `names`
        normalized, checked and weighted."""
        ext = self.plugins[plugin].score_extensions()  # type: ignore[attr-defined]  # a score plugin
        return weighted_column(plugin, ext, self.score_weights.get(plugin, 1), state, pod, lambda: names,
                               np.asarray(raw, dtype=np.int64))

    # -- Reserve .. PostBind ----------------------------------------------------------------
    def run_reserve_plugins_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        for pl in self.reserve_plugins:
            s = pl.reserve(state, pod, node_name)
            if s is not None and not s.is_success():
                return s.with_plugin(pl.name)
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for pl in reversed(self.reserve_plugins):
            pl.unreserve(state, pod, node_name)

    def run_permit_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        for pl in self.permit_plugins:
            s, _timeout = pl.permit(state, pod, node_name)
            if s is not None and not s.is_success():
                return s.with_plugin(pl.name)
        return None

    def run_pre_bind_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        for pl in self.pre_bind_plugins:
            s = pl.pre_bind(state, pod, node_name)
            if s is not None and not s.is_success():
                return s.with_plugin(pl.name)
        return None

    def run_bind_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if not self.bind_plugins:
            return Status(Code.SKIP)
        s: Status | None = None
        for pl in self.bind_plugins:
            s = pl.bind(state, pod, node_name)
            if s is not None and s.code == Code.SKIP:
                continue
            if s is not None and not s.is_success():
                return s.with_plugin(pl.name)
            return s
        return s

    def run_post_bind_plugins(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for pl in self.post_bind_plugins:
            pl.post_bind(state, pod, node_name)


def _go_list(items: Sequence[str]) -> str:
    """How Go's %v prints a []string: [a b c]."""
    return "[" + " ".join(items) + "]"


__all__ = ["Framework", "as_status", "invalid_score", "wrap_error"]
