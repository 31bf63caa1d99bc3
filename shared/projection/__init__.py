"""The read model and its fold: pure (no database), shared by the projector and replay."""

from .fold import apply, derive_pod, fold, keys_for
from .rows import (
    AttemptKey,
    AttemptRow,
    BindingKey,
    BindingRow,
    BindingState,
    NamespaceRow,
    NodeRow,
    PdbKey,
    PdbRow,
    PodPhase,
    PodRow,
    PodState,
    PreemptionRow,
    PriorityClassRow,
    ReadModel,
    Row,
    RowKey,
    TableName,
)

__all__ = [
    "AttemptKey", "AttemptRow", "BindingKey", "BindingRow", "BindingState", "NodeRow", "PdbKey", "PdbRow", "PodPhase", "PodRow", "PodState",
    "PreemptionRow", "PriorityClassRow", "NamespaceRow", "ReadModel", "Row", "RowKey", "TableName", "apply", "derive_pod", "fold", "keys_for",
]
