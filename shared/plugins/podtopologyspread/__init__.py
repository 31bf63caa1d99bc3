"""PodTopologySpread: DoNotSchedule constraints filter nodes, ScheduleAnyway constraints score them."""

from .common import ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, Constraint
from .plugin import SYSTEM_DEFAULT_CONSTRAINTS, PodTopologySpread, parse_args

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH", "SYSTEM_DEFAULT_CONSTRAINTS", "Constraint",
    "PodTopologySpread", "parse_args",
]
