"""The bind decision: the binder's per-shard state, its fold and the fit re-check (pure, no I/O)."""

from .state import (
    DEFAULT_ANTI_AFFINITY,
    NODE_NOT_FOUND,
    NOTHING_IGNORED,
    POD_DELETED,
    BinderState,
    Ignored,
    NodeShard,
    anti_affinity_filtered,
    ignored_by_profile,
    rebuild_shard,
    shard_counts,
    unfit_reasons,
)

__all__ = ["DEFAULT_ANTI_AFFINITY", "NODE_NOT_FOUND", "NOTHING_IGNORED", "POD_DELETED", "BinderState", "Ignored",
           "NodeShard", "anti_affinity_filtered", "ignored_by_profile", "rebuild_shard", "shard_counts",
           "unfit_reasons"]
