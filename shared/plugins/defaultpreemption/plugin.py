"""The DefaultPreemption PostFilter plugin (upstream plugins/defaultpreemption).

Victim selection on one node: remove every lower-priority pod, check the preemptor fits, then
add pods back ("reprieve") from the most important down, PDB-violating pods first, keeping
each one whose return still lets the preemptor fit. The pods not reprieved are the victims.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import cmp_to_key
from operator import attrgetter
from typing import Any

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import Handle, PostFilterPlugin, PostFilterResult
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code, Status
from shared.plugins import names
from shared.preemption import Candidate, Evaluator, ScoreFunc, Victims, filter_pods_with_pdb_violation, importance_key
from shared.preemption import more_important_pod as default_more_important_pod
from shared.preemption.victims_table import VictimsTable

NAME = names.DEFAULT_PREEMPTION
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
PREEMPT_NEVER = "Never"
DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

IsEligiblePod = Callable[[NodeInfo, PodInfo, PodInfo], bool]
MoreImportantPod = Callable[[PodInfo, PodInfo], bool]
VICTIMS_MEMO_SIZE = 200_000
VICTIMS_TABLES = 8  # preemptor specs whose answers are kept per node position
_NAME = attrgetter("name")
_VICTIMS = attrgetter("victims")


def _any_pod(node_info: NodeInfo, victim: PodInfo, preemptor: PodInfo) -> bool:
    return True


def pod_terminating_by_preemption(pod: PodInfo) -> bool:
    """Being deleted, with the DisruptionTarget condition the scheduler sets when it preempts."""
    if pod.pod.metadata.deletion_timestamp is None:
        return False
    for condition in pod.pod.status.conditions:
        if condition.type == DISRUPTION_TARGET:
            return condition.status == "True" and condition.reason == PREEMPTION_BY_SCHEDULER
    return False


def _validated_args(args: Mapping[str, Any] | None) -> tuple[int, int]:
    args = args or {}
    percentage = args.get("minCandidateNodesPercentage", 10)
    absolute = args.get("minCandidateNodesAbsolute", 100)
    if isinstance(percentage, bool) or not isinstance(percentage, int):
        raise TypeError(f"minCandidateNodesPercentage: must be an integer, got {percentage!r}")
    if isinstance(absolute, bool) or not isinstance(absolute, int):
        raise TypeError(f"minCandidateNodesAbsolute: must be an integer, got {absolute!r}")
    errors: list[str] = []
    if not 0 <= percentage <= 100:
        errors.append(f"minCandidateNodesPercentage: Invalid value: {percentage}: not in valid range [0, 100]")
    if absolute < 0:
        errors.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
    if percentage == 0 and absolute == 0:
        errors.append("minCandidateNodesPercentage: Invalid value: 0: "
                      "cannot be zero at the same time as minCandidateNodesAbsolute")
        errors.append("minCandidateNodesAbsolute: Invalid value: 0: "
                      "cannot be zero at the same time as minCandidateNodesPercentage")
    if errors:
        raise ValueError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return percentage, absolute


class DefaultPreemption(PostFilterPlugin):
    NAME = NAME

    def __init__(self, handle: Handle, min_candidate_nodes_percentage: int = 10,
                 min_candidate_nodes_absolute: int = 100) -> None:
        self.handle = handle
        self.min_candidate_nodes_percentage = min_candidate_nodes_percentage
        self.min_candidate_nodes_absolute = min_candidate_nodes_absolute
        # The random offset where the dry run starts scanning; the simulator seeds it.
        self.rng = random.Random(0)
        # Hooks as upstream exposes them: extra victim filtering and the reprieve order.
        self.is_eligible_pod: IsEligiblePod = _any_pod
        self.more_important_pod: MoreImportantPod = default_more_important_pod
        self._victims_memo: dict[Hashable, tuple[Candidate, Status | None]] = {}
        # The evaluator reads remembered dry runs once per node it scans: the dict's own lookup.
        self.remembered_victims: Callable[[Hashable], tuple[Candidate, Status | None] | None] = \
            self._victims_memo.get
        self._memo_allowed_for: tuple[CycleState, PodInfo, bool] | None = None
        self._victims_tables: OrderedDict[tuple[bytes, int], VictimsTable] = OrderedDict()
        self.evaluator = Evaluator(NAME, handle, self)

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> DefaultPreemption:
        percentage, absolute = _validated_args(args)
        return cls(handle, percentage, absolute)

    # -- PostFilter -------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        result, status = self.evaluator.preempt(state, pod, filtered_node_status)
        msg = status.message()
        if msg:
            return result, Status(status.code, "preemption: " + msg, error=status.error)
        return result, status

    # -- the evaluator's policy -------------------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """At least minCandidateNodesPercentage of the nodes and minCandidateNodesAbsolute
        nodes, never more than there are."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        return min(max(n, self.min_candidate_nodes_absolute), num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return dict(zip(map(_NAME, candidates), map(_VICTIMS, candidates)))  # built in C: 500 a preemptor

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc] | None:
        return None

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: PodInfo) -> bool:
        return victim.priority < preemptor.priority and self.is_eligible_pod(node_info, victim, preemptor)

    def pod_eligible_to_preempt_others(self, pod: PodInfo, nominated_node_status: Status | None) -> tuple[bool, str]:
        """Not with preemptionPolicy Never; not while victims of an earlier preemption are still
        terminating on the nominated node, unless that node is now out of reach for good."""
        if pod.pod.spec.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.pod.status.nominated_node_name
        if nominated:
            if nominated_node_status is not None and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            info = self.handle.snapshot().get(nominated)
            if info is not None:
                for p in info.pods:
                    if self.is_preemption_allowed(info, p, pod) and pod_terminating_by_preemption(p):
                        return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def _sorted(self, pods: list[PodInfo]) -> list[PodInfo]:
        more = self.more_important_pod
        if more is default_more_important_pod:
            return sorted(pods, key=importance_key)  # the same order, without a comparison call per pair

        def compare(a: PodInfo, b: PodInfo) -> int:
            return -1 if more(a, b) else (1 if more(b, a) else 0)
        return sorted(pods, key=cmp_to_key(compare))

    # -- remembered dry runs (the evaluator asks before it clones a node) ---------------------
    def victims_memo_keys(self, state: CycleState, pod: PodInfo,
                          pdbs: Sequence[Any]) -> Callable[[NodeInfo], Hashable | None] | None:
        """Where each node's dry-run answer is remembered for this dry run, or None when nothing
        may be.

        Answers are remembered per (node state, pod spec, the nominated pods Filter counts there)
        when nothing else can change them: every Filter plugin that runs is node-local, no PDB
        applies and the victim hooks are the defaults. Preemptors alike in spec then pay for each
        node's dry run once until that node or its counted nominations change (a workload
        preempting over 5,000 nodes re-ran about 500 per preemptor)."""
        if not self._memo_allowed(state, pod, pdbs):
            return None
        signature = pod.signature()
        nominator = self.handle.nominator()
        keys_for = getattr(self.handle, "counted_nominations_key", None)
        nominations = keys_for(pod) if keys_for is not None else None
        listing = getattr(nominator, "nodes_with_nominations", None)
        nominated = listing() if listing is not None else None

        def key(info: NodeInfo) -> Hashable | None:
            name = info.name
            if nominated is not None and name not in nominated:
                return name, info.generation, signature
            if nominations is None:
                return None if nominator.nominated_pods_for_node(name) else (name, info.generation, signature)
            return name, info.generation, signature, nominations(name)
        return key

    def victims_table(self, state: CycleState, pod: PodInfo,
                      pdbs: Sequence[Any]) -> tuple[VictimsTable, str | None] | None:
        """The pod spec's dry-run answers per node position (when `victims_memo_keys` would
        remember them and the nominator logs its changes), with the pod's own nominated node."""
        if not self._memo_allowed(state, pod, pdbs):
            return None
        log = getattr(self.handle, "nomination_log", lambda: None)()
        stamped = getattr(self.handle, "nomination_stamps", lambda _: None)(pod)
        if log is None or stamped is None:
            return None
        snapshot = self.handle.snapshot()
        key = (pod.signature(), pod.priority)
        table = self._victims_tables.get(key)
        if table is None or table.snapshot is not snapshot:
            table = self._victims_tables[key] = VictimsTable(snapshot)
            if len(self._victims_tables) > VICTIMS_TABLES:
                self._victims_tables.popitem(last=False)
        self._victims_tables.move_to_end(key)
        table.catch_up(log)
        return table, stamped[1]

    def picks_by_rank(self) -> bool:
        """True unless a subclass or the instance brings score functions or victims of its own."""
        return (getattr(self.ordered_score_funcs, "__func__", None) is DefaultPreemption.ordered_score_funcs
                and getattr(self.candidates_to_victims_map, "__func__", None)
                is DefaultPreemption.candidates_to_victims_map)

    def kept(self) -> tuple[int, int]:
        """The dry runs and the victims tables remembered now."""
        return len(self._victims_memo), len(self._victims_tables)

    def remember_victims(self, key: Hashable, answer: tuple[Candidate, Status | None]) -> None:
        if len(self._victims_memo) >= VICTIMS_MEMO_SIZE:
            self._victims_memo.clear()
        self._victims_memo[key] = answer

    def _memo_allowed(self, state: CycleState, pod: PodInfo, pdbs: Sequence[Any]) -> bool:
        """Whether only the node's own state decides (asked once per dry run: the evaluator asks
        with the same `state` for every node)."""
        last = self._memo_allowed_for
        if last is not None and last[0] is state and last[1] is pod:
            return last[2]
        allowed = (getattr(self.handle, "memoize", True) and not pdbs and self.is_eligible_pod is _any_pod
                   and self.more_important_pod is default_more_important_pod
                   and (filters := getattr(self.handle, "filter_plugins", None)) is not None
                   and all(getattr(pl, "NODE_LOCAL", False) for pl in filters
                           if pl.name not in state.skip_filter_plugins))
        self._memo_allowed_for = (state, pod, allowed)
        return allowed

    def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo, pdbs: Sequence[Any]
    ) -> tuple[list[PodInfo], int, Status | None]:
        """The fewest, least important pods to evict from node_info (a clone) so that pod fits,
        and how many of them violate a PDB. state is a clone as well."""
        handle = self.handle

        def remove(victim: PodInfo) -> Status | None:
            if not node_info.remove_pod(victim):
                return Status(Code.ERROR, f"no corresponding pod {victim.name} in pods of node {node_info.name}")
            return _as_error(handle.run_pre_filter_extension_remove_pod(state, pod, victim, node_info))

        def add(victim: PodInfo) -> Status | None:
            node_info.add_pod(victim)
            return _as_error(handle.run_pre_filter_extension_add_pod(state, pod, victim, node_info))

        potential = [p for p in node_info.pods if self.is_preemption_allowed(node_info, p, pod)]
        for p in potential:
            if (s := remove(p)) is not None:
                return [], 0, s
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
        # Pod affinity to the removed pods is deliberately not considered (as upstream).
        status = handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if status is not None and not status.is_success():
            return [], 0, status

        violating, non_violating = filter_pods_with_pdb_violation(self._sorted(potential), pdbs)
        victims: list[PodInfo] = []

        def reprieve(p: PodInfo) -> tuple[bool, Status | None]:
            if (s := add(p)) is not None:
                return False, s
            fits = _ok(handle.run_filter_plugins_with_nominated_pods(state, pod, node_info))
            if not fits:
                if (s := remove(p)) is not None:
                    return False, s
                victims.append(p)
            return fits, None

        num_violating = 0
        for p in violating:
            fits, err = reprieve(p)
            if err is not None:
                return [], 0, err
            if not fits:
                num_violating += 1
        for p in non_violating:
            _, err = reprieve(p)
            if err is not None:
                return [], 0, err
        if violating and non_violating:
            victims = self._sorted(victims)
        return victims, num_violating, None


def _ok(status: Status | None) -> bool:
    return status is None or status.is_success()


def _as_error(status: Status | None) -> Status | None:
    """A failed PreFilter extension aborts victim selection on the node as an Error."""
    if _ok(status):
        return None
    assert status is not None
    return Status(Code.ERROR, status.message(), plugin=status.plugin, error=status.error)
