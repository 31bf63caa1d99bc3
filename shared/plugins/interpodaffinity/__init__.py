"""InterPodAffinity plugin: required and preferred pod (anti-)affinity across topology domains."""

from .filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_STATE_KEY,
    PreFilterState,
)
from .plugin import InterPodAffinity, InterPodAffinityArgs
from .scoring import PRE_SCORE_STATE_KEY, PreScoreState

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH", "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH", "PRE_FILTER_STATE_KEY", "PRE_SCORE_STATE_KEY",
    "InterPodAffinity", "InterPodAffinityArgs", "PreFilterState", "PreScoreState",
]
