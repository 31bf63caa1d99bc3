"""The preemption evaluator (upstream framework/preemption.Evaluator), without side effects.

Preempt finds the nodes where evicting lower-priority pods could make room, dry-runs victim
selection on clones of their state, lets extenders veto or trim candidates, picks the best one
and describes the evictions and nomination changes in a PostFilterResult for the caller to apply.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import chain
from typing import Any, Protocol, runtime_checkable

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import Handle, PostFilterResult
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code, Status
from shared.scheduler.fit_error import Diagnosis, FitError, NodeToStatus

from .victims import Candidate, ScoreFunc, Victims, pick_one_node_for_preemption
from .victims_table import Answer, ScannedCandidates, VictimsTable

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE = "no candidate node for preemption"
NO_NODES = "no nodes available"


class PreemptionPolicy(Protocol):
    """What a preemption plugin decides (upstream preemption.Interface)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]: ...

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, nominated_node_status: Status | None
    ) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo, pdbs: Sequence[Any]
    ) -> tuple[list[PodInfo], int, Status | None]: ...

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc] | None: ...


@runtime_checkable
class RemembersVictims(Protocol):
    """A policy that remembers a node's dry-run answer for as long as the node, the pod's spec and
    the nominated pods Filter counts there decide it.
    A remembered Candidate is shared by every dry run that reads it: never changed in place."""

    def victims_memo_keys(self, state: CycleState, pod: PodInfo,
                          pdbs: Sequence[Any]) -> Callable[[NodeInfo], Hashable | None] | None: ...

    remembered_victims: Callable[[Hashable], tuple[Candidate, Status | None] | None]

    def remember_victims(self, key: Hashable, answer: tuple[Candidate, Status | None]) -> None: ...


@runtime_checkable
class KeepsVictimsTables(Protocol):
    """A policy that keeps dry-run answers per node position (see `VictimsTable`)."""

    def victims_table(self, state: CycleState, pod: PodInfo,
                      pdbs: Sequence[Any]) -> tuple[VictimsTable, str | None] | None:
        """The pod spec's table, caught up, with the node the pod itself is nominated to; None
        when something besides the node, the spec and the counted nominations decides."""
        ...

    def picks_by_rank(self) -> bool:
        """The pick is the default one: the first candidate whose `Victims.rank` is greatest."""
        ...


class PreemptionExtender(Protocol):
    """The preempt verb of a scheduler extender."""

    name: str

    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: PodInfo) -> bool: ...

    def is_ignorable(self) -> bool: ...

    def process_preemption(self, pod: PodInfo, node_to_victims: dict[str, Victims]) -> dict[str, Victims]: ...


def _error(message: str) -> Status:
    return Status(Code.ERROR, message, error=RuntimeError(message))


def _not_a_candidate(name: str, status: Status | None, node_statuses: dict[str, Status], errors: list[str]) -> None:
    """Record why a scanned node is no candidate: its status, or an Error where victim selection
    succeeded without evicting anybody."""
    if status is None or status.code == Code.SUCCESS:
        status = _error(f'expected at least one victim pod on node "{name}"')
    if status.code == Code.ERROR:
        errors.append(status.message())
    node_statuses[name] = status


def _aggregate(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): distinct messages, bracketed when more than one."""
    distinct = list(dict.fromkeys(messages))
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"


def _absent_unresolvable(statuses: Mapping[str, Status], name: str) -> Status:
    """A node missing from the filter statuses counts as UnschedulableAndUnresolvable, as
    upstream's NodeToStatus default for absent nodes."""
    return statuses.get(name) or Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


class Evaluator:
    def __init__(self, plugin_name: str, handle: Handle, policy: PreemptionPolicy) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.policy = policy
        self._tables = policy if isinstance(policy, KeepsVictimsTables) else None  # asked once: a slow check

    def preempt(
        self, state: CycleState, pod: PodInfo, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """<None, Error> transient failure; <None, Unschedulable> keep the nomination as it is;
        <result with "" node, Unschedulable> preemption cannot help, clear the nomination;
        <result, Success> nominate result.nominated_node_name after evicting result.victims."""
        nominated = pod.pod.status.nominated_node_name
        nominated_status = _absent_unresolvable(statuses, nominated) if nominated else None
        ok, msg = self.policy.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)

        all_nodes = self.handle.snapshot().node_info_list
        if not all_nodes:
            return None, _error(NO_NODES)
        candidates, node_statuses, errors = self.find_candidates(state, all_nodes, pod, statuses)
        if errors and not candidates:
            return None, _error(_aggregate(errors))
        if not candidates:
            diagnosis = Diagnosis()
            diagnosis.node_to_status = node_statuses
            diagnosis.absent_nodes_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NOT_HELPFUL)
            fit_error = FitError(pod.key, len(all_nodes), diagnosis)
            return PostFilterResult(""), Status(Code.UNSCHEDULABLE, fit_error.message())

        candidates, status = self.call_extenders(pod, candidates)
        if status is not None:
            return None, status
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, NO_CANDIDATE)
        clear = self.lower_priority_nominated_pods(pod, best.name)
        return PostFilterResult(best.name, best.victims.pods, clear), Status(Code.SUCCESS)

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: PodInfo, statuses: Mapping[str, Status]
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        # Only nodes a filter rejected as Unschedulable may be helped by removing pods.
        # (A node absent from the statuses counts as UnschedulableAndUnresolvable.)
        helpable = Code.UNSCHEDULABLE
        pdbs = self.handle.pod_disruption_budgets()
        kept = self._tables.victims_table(state, pod, pdbs) if self._tables is not None else None
        if kept is not None:
            positions = (statuses.positions_with_code(helpable, all_nodes)
                         if isinstance(statuses, NodeToStatus) else None)
            if positions is None:
                positions = kept[0].positions_with_code(statuses, helpable)
            if not len(positions):
                return [], {}, []
            offset, num_candidates = self.policy.get_offset_and_num_candidates(len(positions))
            if num_candidates > 0:  # with none wanted the scan keeps none and never stops early
                return self._scan(kept, state, pod, positions, pdbs, offset, num_candidates)
            potential = [all_nodes[p] for p in positions.tolist()]
        else:
            if isinstance(statuses, NodeToStatus):
                potential = statuses.nodes_with_code(helpable, all_nodes)
            else:
                potential = [n for n in all_nodes if (s := statuses.get(n.name)) is not None and s.code == helpable]
            if not potential:
                return [], {}, []
            offset, num_candidates = self.policy.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def _dry_run_one(self, state: CycleState, pod: PodInfo, info: NodeInfo, pdbs: Sequence[Any]) -> Answer:
        """Victim selection on clones of the node's and the cycle's state."""
        pods, num_violations, status = self.policy.select_victims_on_node(state.clone(), pod, info.clone(), pdbs)
        return Candidate(info.name, Victims(pods, num_violations)), status

    def _scan(self, kept: tuple[VictimsTable, str | None], state: CycleState, pod: PodInfo, positions: Any,
              pdbs: Sequence[Any], offset: int, num_candidates: int,
              ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """`dry_run_preemption` over a table of kept answers. The table is kept only where no PDB
        applies, so every candidate is non-violating and the scan stops at `num_candidates`."""
        table, own_node = kept
        run = table.scan(positions, offset, num_candidates, own_node,
                         lambda info: self._dry_run_one(state, pod, info, pdbs))
        node_statuses: dict[str, Status] = {}
        errors: list[str] = []
        for info, (_, status) in run.others:
            _not_a_candidate(info.name, status, node_statuses, errors)
        return run.candidates, node_statuses, errors

    def dry_run_preemption(
        self, state: CycleState, pod: PodInfo, potential: Sequence[NodeInfo], pdbs: Sequence[Any],
        offset: int, num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Select victims on clones of each node's state, scanning from offset, until there are
        num_candidates candidates of which at least one violates no PDB (upstream stops its
        parallel workers at the same point). Non-violating candidates come first."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        node_statuses: dict[str, Status] = {}
        errors: list[str] = []
        memo = self.policy if isinstance(self.policy, RemembersVictims) else None
        keys = memo.victims_memo_keys(state, pod, pdbs) if memo is not None else None
        remembered = memo.remembered_victims if memo is not None else None
        walk = chain(potential[offset:], potential[:offset]) if offset else potential
        for info in walk:
            key = keys(info) if keys is not None else None
            answer = remembered(key) if remembered is not None and key is not None else None
            if answer is None:  # not asked about this node state before: dry-run it on a clone
                answer = self._dry_run_one(state, pod, info, pdbs)
                if memo is not None and key is not None:
                    memo.remember_victims(key, answer)
            candidate, status = answer
            succeeded = status is None or status.code == Code.SUCCESS
            if succeeded and candidate.victims.pods:
                bucket = non_violating if candidate.victims.num_pdb_violations == 0 else violating
                if len(bucket) < num_candidates:
                    bucket.append(candidate)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            _not_a_candidate(info.name, status, node_statuses, errors)
        return non_violating + violating, node_statuses, errors

    def call_extenders(self, pod: PodInfo, candidates: list[Candidate]) -> tuple[list[Candidate], Status | None]:
        """Let extenders that support preemption trim the candidates or their victims."""
        extenders: list[PreemptionExtender] = list(self.handle.extenders())
        if not extenders:
            return candidates, None
        victims_map = self.policy.candidates_to_victims_map(candidates)
        if not victims_map:
            return candidates, None
        for ext in extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod):
                continue
            try:
                result = dict(ext.process_preemption(pod, victims_map))
            except Exception as exc:  # noqa: BLE001 - an extender failure is a status, as upstream
                if ext.is_ignorable():
                    continue
                return [], Status(Code.ERROR, str(exc), error=exc)
            for node_name, victims in list(result.items()):
                if victims is None or not victims.pods:
                    if ext.is_ignorable():
                        del result[node_name]
                        continue
                    return [], _error(f'expected at least one victim pod on node "{node_name}"')
            victims_map = result
            if not victims_map:
                break
        return [Candidate(name, victims) for name, victims in victims_map.items()], None

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        if isinstance(candidates, ScannedCandidates) and candidates.first_best is not None \
                and self._tables is not None and self._tables.picks_by_rank():
            return candidates[candidates.first_best]  # the table's scan found the pick as arrays
        victims_map = self.policy.candidates_to_victims_map(candidates)
        node = pick_one_node_for_preemption(victims_map, self.policy.ordered_score_funcs(victims_map))
        victims = victims_map.get(node)
        return Candidate(node, victims) if victims is not None else candidates[0]

    def lower_priority_nominated_pods(self, pod: PodInfo, node_name: str) -> list[PodInfo]:
        """Pods nominated to the node with lower priority may no longer fit there once the
        preemptor takes the room: their nominations are cleared so they look elsewhere."""
        return [p for p in self.handle.nominator().nominated_pods_for_node(node_name) if p.priority < pod.priority]


__all__ = ["NOT_HELPFUL", "NO_CANDIDATE", "Evaluator", "PreemptionExtender", "PreemptionPolicy"]
