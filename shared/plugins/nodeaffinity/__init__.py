"""NodeAffinity plugin: nodeSelector, required and preferred node affinity, addedAffinity."""

from .plugin import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NodeAffinity,
    RequiredNodeAffinity,
    pinned_node_names,
)
from .terms import CompiledTerm, NodeSelectorMatcher, PreferredTerms, parse_int64

__all__ = [
    "ERR_REASON_CONFLICT", "ERR_REASON_ENFORCED", "ERR_REASON_POD", "CompiledTerm", "NodeAffinity",
    "NodeSelectorMatcher", "PreferredTerms", "RequiredNodeAffinity", "parse_int64", "pinned_node_names",
]
