"""TaintToleration plugin and the taint/toleration matching helpers other plugins share."""

from .helpers import (
    TAINT_NODE_UNSCHEDULABLE,
    default_normalize_score,
    do_not_schedule,
    find_matching_untolerated_taint,
    tolerates,
    tolerations_tolerate_taint,
)
from .plugin import TaintToleration, untolerated_taint_reason

__all__ = [
    "TAINT_NODE_UNSCHEDULABLE", "TaintToleration", "default_normalize_score", "do_not_schedule",
    "find_matching_untolerated_taint", "tolerates", "tolerations_tolerate_taint", "untolerated_taint_reason",
]
