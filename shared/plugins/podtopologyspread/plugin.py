"""The PodTopologySpread plugin: spreads pods across topology domains (upstream plugin.go).

Args (PodTopologySpreadArgs as written in KubeSchedulerConfiguration): `defaultingType` "System"
(the default: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway) or "List" with
`defaultConstraints`. Default constraints apply to pods declaring none and select the pods of the
Services/ReplicaSets/StatefulSets/ReplicationControllers owning the pod; Berth keeps none of those
objects, so by default no selector is found and, as upstream then, no default constraint applies.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import msgspec

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeScore,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import SKIP, Code, Status
from shared.model import TopologySpreadConstraint
from shared.plugins import names

from .common import (
    DO_NOT_SCHEDULE,
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    SCHEDULE_ANYWAY,
    DefaultSelectorFn,
    no_default_selector,
    pod_constraints,
)
from .filtering import NodeCounts, PreFilterState, cal_pre_filter_state, update_with_pod
from .scoring import DomainTotals, PreScoreState, count_all_nodes, init_pre_score_state, node_score, normalize_scores

COUNTS_MEMO_SIZE = 4  # distinct pod shapes whose per-node counts are kept
PRE_FILTER_STATE_KEY = "PreFilter" + names.POD_TOPOLOGY_SPREAD
PRE_SCORE_STATE_KEY = "PreScore" + names.POD_TOPOLOGY_SPREAD

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY),
    TopologySpreadConstraint(max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY),
)


def parse_args(args: Mapping[str, Any] | None) -> tuple[str, list[TopologySpreadConstraint]]:
    """The defaulting type and default constraints, validated as ValidatePodTopologySpreadArgs."""
    args = args or {}
    defaulting = args.get("defaultingType") or SYSTEM_DEFAULTING
    raw = args.get("defaultConstraints") or []
    try:
        constraints = msgspec.convert(raw, list[TopologySpreadConstraint])
    except msgspec.ValidationError as exc:
        raise ValueError(f"defaultConstraints: {exc}") from None
    errors: list[str] = []
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errors.append(f'defaultingType: Unsupported value: "{defaulting}": supported values: "List", "System"')
    elif defaulting == SYSTEM_DEFAULTING and constraints:
        errors.append(f'defaultingType: Invalid value: "{defaulting}": when .defaultConstraints are not empty')
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(constraints):
        path = f"defaultConstraints[{i}]"
        if c.max_skew <= 0:
            errors.append(f"{path}.maxSkew: Invalid value: {c.max_skew}: not in valid range (0, inf)")
        if not c.topology_key:
            errors.append(f"{path}.topologyKey: Required value: can not be empty")
        if not c.when_unsatisfiable:
            errors.append(f"{path}.whenUnsatisfiable: Required value: can not be empty")
        elif c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            errors.append(f'{path}.whenUnsatisfiable: Unsupported value: "{c.when_unsatisfiable}": '
                          'supported values: "DoNotSchedule", "ScheduleAnyway"')
        if c.label_selector is not None:
            errors.append(f"{path}.labelSelector: Forbidden: constraint must not define a selector, "
                          "as they deduced for each pod")
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            errors.append(f"{path}: Duplicate value: \"{{{c.topology_key}, {c.when_unsatisfiable}}}\"")
        seen.add(pair)
    if errors:
        raise ValueError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    if defaulting == SYSTEM_DEFAULTING:
        return defaulting, list(SYSTEM_DEFAULT_CONSTRAINTS)
    return defaulting, constraints


class PodTopologySpread(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions,
                        PreFilterExtensions, ScoreExtensions):
    NAME = names.POD_TOPOLOGY_SPREAD

    __slots__ = ("_handle", "default_constraints", "system_defaulted", "_default_selector", "_counts_memo",
                 "_totals_memo")

    def __init__(self, handle: Handle | None = None, default_constraints: Sequence[TopologySpreadConstraint] = (),
                 system_defaulted: bool = False, default_selector: DefaultSelectorFn | None = None) -> None:
        self._handle = handle
        self.default_constraints = list(default_constraints)
        self.system_defaulted = system_defaulted
        self._default_selector = default_selector or no_default_selector
        self._counts_memo: OrderedDict[_PodShape, NodeCounts] = OrderedDict()
        self._totals_memo: OrderedDict[_PodShape, DomainTotals] = OrderedDict()

    def _memo_for(self, pod: PodInfo) -> NodeCounts | None:
        """Per-node counts for the hard constraints, shared by pods that count alike."""
        return _kept(self._handle, self._counts_memo, pod, NodeCounts)

    def _totals_for(self, pod: PodInfo) -> DomainTotals | None:
        """Domain sums for the soft constraints, shared by pods that count alike."""
        return _kept(self._handle, self._totals_memo, pod, DomainTotals)

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle,
            default_selector: DefaultSelectorFn | None = None) -> PodTopologySpread:
        defaulting, constraints = parse_args(args)
        return cls(handle, constraints, defaulting == SYSTEM_DEFAULTING, default_selector)

    def events_to_register(self) -> list[events.ClusterEvent]:
        # As upstream with queueing hints on: matching pods appear, change labels or go away; the
        # pod may gain a toleration (nodeTaintsPolicy Honor); nodes change domains or taints.
        A = events.ActionType
        return [
            events.ClusterEvent(events.POD, A.ADD | A.UPDATE_POD_LABEL | A.UPDATE_POD_TOLERATION | A.DELETE),
            events.ClusterEvent(events.NODE, A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT),
        ]

    # -- PreFilter / Filter ------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        constraints = pod_constraints(pod, DO_NOT_SCHEDULE, self.default_constraints, self._default_selector)
        if not constraints:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, cal_pre_filter_state(pod, constraints, nodes, self._memo_for(pod)))
        return None, None

    def checks_nothing_for(self, pod: PodInfo) -> bool:
        # As PreFilter's skip: no DoNotSchedule constraint, its own or a default one.
        return not pod_constraints(pod, DO_NOT_SCHEDULE, self.default_constraints, self._default_selector)

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        return self._update(state, pod, pod_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        return self._update(state, pod, pod_to_remove, node_info, -1)

    def _update(self, state: CycleState, pod: PodInfo, updated: PodInfo, node_info: NodeInfo,
                delta: int) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _missing(PRE_FILTER_STATE_KEY)
        update_with_pod(s, updated, pod, node_info, delta)
        return None

    def verdict_labels(self, state: CycleState) -> tuple[str, ...] | None:
        """The constraints' topology keys: Filter reads nothing else of the node."""
        s = state.get(PRE_FILTER_STATE_KEY)
        return tuple(c.topology_key for c in s.constraints) if isinstance(s, PreFilterState) else None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _missing(PRE_FILTER_STATE_KEY)
        labels = node_info.labels
        constraints = s.constraints
        if not constraints:
            return None
        # Nodes with the same topology values get the same verdict: decide each once.
        key: object = labels.get(constraints[0].topology_key) if len(constraints) == 1 else tuple(
            labels.get(c.topology_key) for c in constraints)
        verdict = s.verdicts.get(key, _UNDECIDED)
        if verdict is _UNDECIDED:
            verdict = s.verdicts[key] = _verdict(s, labels)
        return verdict  # type: ignore[return-value]  # a Status or None once _UNDECIDED is replaced

    # -- PreScore / Score --------------------------------------------------------------------
    def pre_score_reads_nodes(self, pod: PodInfo) -> bool:
        """Soft constraints count only the topology values of nodes that passed Filter."""
        return bool(pod_constraints(pod, SCHEDULE_ANYWAY, self.default_constraints, self._default_selector))

    def scores_nothing_for(self, pod: PodInfo) -> bool:
        # As PreScore's skip: no ScheduleAnyway constraint, its own or a default one.
        return not pod_constraints(pod, SCHEDULE_ANYWAY, self.default_constraints, self._default_selector)

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = self._handle.snapshot().node_info_list if self._handle is not None else list(nodes)
        if not all_nodes:
            return SKIP
        # Only non-system defaults require every topology key, so that nodes without a zone
        # label still get hostname spreading.
        require_all = bool(pod.pod.spec.topology_spread_constraints) or not self.system_defaulted
        constraints = pod_constraints(pod, SCHEDULE_ANYWAY, self.default_constraints, self._default_selector)
        if not constraints:
            return SKIP
        s = init_pre_score_state(constraints, nodes, require_all)
        count_all_nodes(s, pod, all_nodes, require_all, self._totals_for(pod))
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return 0, _missing(PRE_SCORE_STATE_KEY, "error reading")
        return node_score(s, pod, node_info), None

    def score_extensions(self) -> ScoreExtensions:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return _missing(PRE_SCORE_STATE_KEY, "error reading")
        normalize_scores(s, scores)
        return None


_UNDECIDED = object()

_PodShape = tuple[str, bytes, tuple[tuple[str, str], ...]]
_Memo = TypeVar("_Memo")


def _kept(handle: Handle | None, memos: OrderedDict[_PodShape, _Memo], pod: PodInfo,
          make: Callable[[], _Memo]) -> _Memo | None:
    """The memo of pods that count alike: same namespace, spec and labels (labels enter the
    selectors through matchLabelKeys); None where the framework keeps no memos (over the clones
    preemption's dry runs change, which the NodeInfo journal does not record)."""
    if not getattr(handle, "memoize", False):
        return None
    key = (pod.namespace, pod.signature(), tuple(sorted(pod.labels.items())))
    memo = memos.get(key)
    if memo is None:
        memo = memos[key] = make()
        if len(memos) > COUNTS_MEMO_SIZE:
            memos.popitem(last=False)
    else:
        memos.move_to_end(key)
    return memo


def _verdict(s: PreFilterState, labels: Mapping[str, str]) -> Status | None:
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
        skew = s.tp_value_to_match_num[i].get(value, 0) + s.self_match[i] - s.min_match_num(i)
        if skew > c.max_skew:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return None


def _missing(key: str, verb: str = "reading") -> Status:
    return Status(Code.ERROR, f'{verb} "{key}" from cycleState: not found')
