"""NodeAffinity: spec.nodeSelector and required node affinity filter nodes (plus the
scheduler-enforced addedAffinity of the plugin args); preferred terms score them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import (
    MAX_NODE_SCORE,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeScore,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import SKIP, Code, Status
from shared.model import NodeAffinity as NodeAffinitySpec
from shared.model import Pod
from shared.plugins import names
from shared.plugins.tainttoleration.helpers import default_normalize_score

from .terms import OBJECT_NAME_FIELD, NodeSelectorMatcher, PreferredTerms

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_AFFINITY
PRE_SCORE_STATE_KEY = "PreScore" + names.NODE_AFFINITY


class RequiredNodeAffinity:
    """GetRequiredNodeAffinity: the nodeSelector (exact label matches) AND the required terms."""

    __slots__ = ("selector", "affinity")

    def __init__(self, pod: Pod) -> None:
        self.selector: tuple[tuple[str, str], ...] = tuple(pod.spec.node_selector.items())
        required = _required(pod)
        self.affinity = NodeSelectorMatcher(required.node_selector_terms) if required is not None else None

    def matches(self, node_info: NodeInfo) -> bool:
        labels = node_info.labels
        for key, value in self.selector:
            if labels.get(key) != value:
                return False
        if self.affinity is not None:
            return self.affinity.matches(labels, node_info.name)
        return True

    def clone(self) -> RequiredNodeAffinity:
        return self  # read-only, independent of other pods


class _PreScoreState:
    __slots__ = ("preferred",)

    def __init__(self, preferred: PreferredTerms | None) -> None:
        self.preferred = preferred

    def clone(self) -> _PreScoreState:
        return self


def _required(pod: Pod) -> Any:
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    return aff.node_affinity.required_during_scheduling_ignored_during_execution


def _preferred(pod: Pod) -> tuple[PreferredTerms | None, Status | None]:
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None, None
    terms = aff.node_affinity.preferred_during_scheduling_ignored_during_execution
    if not terms:
        return None, None
    preferred = PreferredTerms(terms)
    if preferred.errors:
        return None, Status(Code.ERROR, _flatten(preferred.errors))
    return preferred, None


def _flatten(errors: list[str]) -> str:
    """utilerrors.NewAggregate's message: one error alone, several as "[a, b]"."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def _parse_args(args: Mapping[str, Any] | None) -> tuple[NodeSelectorMatcher | None, PreferredTerms | None]:
    """NodeAffinityArgs{addedAffinity}: ValueError when a term does not parse (as upstream's
    ValidateNodeAffinityArgs)."""
    if not args:
        return None, None
    unknown = set(args) - {"addedAffinity", "apiVersion", "kind"}
    if unknown:
        raise ValueError(f"unknown field {sorted(unknown)[0]!r} in NodeAffinityArgs")
    raw = args.get("addedAffinity")
    if raw is None:
        return None, None
    try:
        added = msgspec.convert(raw, NodeAffinitySpec)
    except msgspec.ValidationError as exc:
        raise ValueError(f"addedAffinity: {exc}") from None
    selector: NodeSelectorMatcher | None = None
    preferred: PreferredTerms | None = None
    errors: list[str] = []
    if (ns := added.required_during_scheduling_ignored_during_execution) is not None:
        selector = NodeSelectorMatcher(ns.node_selector_terms,
                                       "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.")
        errors.extend(selector.errors)
    if terms := added.preferred_during_scheduling_ignored_during_execution:
        preferred = PreferredTerms(terms, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution")
        errors.extend(preferred.errors)
    if errors:
        raise ValueError(_flatten(errors))
    return selector, preferred


def pinned_node_names(pod: Pod) -> tuple[set[str] | None, bool]:
    """The node names the required terms pin through matchFields metadata.name In (terms ORed,
    requirements within a term intersected); (None, False) when some term pins no name, and
    (set(), True) when every term pins names but none survives."""
    required = _required(pod)
    if required is None or not required.node_selector_terms:
        return None, False
    node_names: set[str] | None = None
    for term in required.node_selector_terms:
        term_names: set[str] | None = None
        for r in term.match_fields:
            if r.key == OBJECT_NAME_FIELD and r.operator == "In":
                values = set(r.values)
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None, False  # this term can match any node
        node_names = term_names if node_names is None else node_names | term_names
    if node_names is not None and not node_names:
        return set(), True
    return node_names, False


class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions):
    NAME = names.NODE_AFFINITY
    NODE_LOCAL = True
    SCORE_IGNORES_NODE_PODS = True  # the node's labels

    def __init__(self, added_selector: NodeSelectorMatcher | None = None,
                 added_preferred: PreferredTerms | None = None) -> None:
        self.added_selector = added_selector
        self.added_preferred = added_preferred

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodeAffinity:
        return cls(*_parse_args(args))

    def events_to_register(self) -> list[events.ClusterEvent]:
        A = events.ActionType
        return [events.ClusterEvent(events.NODE, A.ADD | A.UPDATE_NODE_LABEL)]

    # -- Filter ------------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        spec = pod.pod.spec
        required = _required(pod.pod)
        if required is None and self.added_selector is None and not spec.node_selector:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, RequiredNodeAffinity(pod.pod))
        names_, conflict = pinned_node_names(pod.pod)
        if conflict:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if names_:
            return PreFilterResult(names_), None
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if self.added_selector is not None and not self.added_selector.matches(node_info.labels, node_info.name):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, RequiredNodeAffinity):
            s = RequiredNodeAffinity(pod.pod)  # PreFilter disabled
        if s.matches(node_info):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)

    # -- Score -------------------------------------------------------------------------------
    def pre_score_reads_nodes(self, pod: PodInfo) -> bool:
        return False

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        preferred, err = _preferred(pod.pod)
        if err is not None:
            return err
        if preferred is None and self.added_preferred is None:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        labels, name = node_info.labels, node_info.name
        count = self.added_preferred.score(labels, name) if self.added_preferred is not None else 0
        s = state.get(PRE_SCORE_STATE_KEY)
        if isinstance(s, _PreScoreState):
            preferred = s.preferred
        else:  # PreScore disabled
            preferred, err = _preferred(pod.pod)
            if err is not None:
                return 0, err
        if preferred is not None:
            count += preferred.score(labels, name)
        return count, None

    def score_extensions(self) -> ScoreExtensions:
        return self

    DEFAULT_NORMALIZE = (MAX_NODE_SCORE, False)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None
