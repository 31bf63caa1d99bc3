"""TaintToleration: a node's NoSchedule/NoExecute taints must be tolerated (Filter); nodes with
fewer untolerated PreferNoSchedule taints score higher (PreScore/Score/NormalizeScore)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import (
    MAX_NODE_SCORE,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeScore,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code, Status
from shared.model import Taint, Toleration
from shared.plugins import names

from .helpers import (
    PREFER_NO_SCHEDULE,
    default_normalize_score,
    do_not_schedule,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)

PRE_SCORE_STATE_KEY = "PreScore" + names.TAINT_TOLERATION


def untolerated_taint_reason(taint: Taint) -> str:
    """The Filter reason, naming the first untolerated taint as v1.31–v1.33 word it.

    Upstream master (and the v1.34 patch line) dropped the key and value for privacy and
    reports "node(s) had untolerated taint(s)"; this is the one place to change for that.
    """
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


class _PreScoreState:
    """The pod's tolerations that can tolerate PreferNoSchedule taints (empty effect included)."""

    __slots__ = ("tolerations",)

    def __init__(self, tolerations: tuple[Toleration, ...]) -> None:
        self.tolerations = tolerations

    def clone(self) -> _PreScoreState:
        return self  # read-only


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions):
    NAME = names.TAINT_TOLERATION
    NODE_LOCAL = True
    SCORE_IGNORES_NODE_PODS = True  # the node's taints

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> TaintToleration:
        return cls()

    def events_to_register(self) -> list[events.ClusterEvent]:
        # As upstream with queueing hints (the default): taints appear on Node add or taint
        # updates; the pod itself may gain tolerations.
        A = events.ActionType
        return [
            events.ClusterEvent(events.NODE, A.ADD | A.UPDATE_NODE_TAINT),
            events.ClusterEvent(events.POD, A.UPDATE_POD_TOLERATION),
        ]

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        taints = node_info.taints
        if not taints:
            return None
        taint = find_matching_untolerated_taint(taints, pod.pod.spec.tolerations, do_not_schedule)
        if taint is None:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, untolerated_taint_reason(taint))

    def pre_score_reads_nodes(self, pod: PodInfo) -> bool:
        return False

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        tolerations = tuple(
            t for t in pod.pod.spec.tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE
        )
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(tolerations))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, _PreScoreState):
            return 0, Status(Code.ERROR, f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        count = 0
        for taint in node_info.taints:
            if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(s.tolerations, taint):
                count += 1
        return count, None

    def score_extensions(self) -> ScoreExtensions:
        return self

    DEFAULT_NORMALIZE = (MAX_NODE_SCORE, True)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None
