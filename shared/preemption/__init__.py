"""Preemption: candidate nodes, victim selection on cloned state, PDB accounting and ranking.

Pure: the evaluator returns a PostFilterResult describing evictions and nomination changes;
the caller carries them out.
"""

from .evaluator import NO_CANDIDATE, NOT_HELPFUL, Evaluator, PreemptionExtender, PreemptionPolicy
from .victims import (
    Candidate,
    ScoreFunc,
    Victims,
    default_score_funcs,
    earliest_pod_start_time,
    filter_pods_with_pdb_violation,
    importance_key,
    more_important_pod,
    pick_one_node_for_preemption,
    pod_start_time,
)

__all__ = [
    "NOT_HELPFUL", "NO_CANDIDATE", "Candidate", "Evaluator", "PreemptionExtender", "PreemptionPolicy", "ScoreFunc",
    "Victims",
    "default_score_funcs", "earliest_pod_start_time", "filter_pods_with_pdb_violation", "importance_key",
    "more_important_pod", "pick_one_node_for_preemption", "pod_start_time",
]
