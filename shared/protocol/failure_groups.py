"""Per-node statuses grouped by equal status, as events carry them (`NodeFailure`): thousands of
nodes usually fail for a handful of reasons."""

from __future__ import annotations

from collections.abc import Iterable

from shared.events import NodeFailure, StatusCode
from shared.framework.status import Code, Status
from shared.indexes.rejections import Rejections

_CODE_NAMES: dict[Code, StatusCode] = {
    Code.SUCCESS: "Success", Code.ERROR: "Error", Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable", Code.WAIT: "Wait",
    Code.SKIP: "Skip", Code.PENDING: "Pending",
}
_CODES = {name: code for code, name in _CODE_NAMES.items()}


def to_failure(status: Status, nodes: Iterable[str] = ()) -> NodeFailure:
    return NodeFailure(code=_CODE_NAMES[status.code],
                       reasons=list(status.reasons), plugin=status.plugin, nodes=list(nodes))


def code_name(code: Code) -> StatusCode:
    """A status code as events name it."""
    return _CODE_NAMES[code]


def to_status(failure: NodeFailure) -> Status:
    return Status(_CODES[failure.code], *failure.reasons, plugin=failure.plugin)


def group_failures(statuses: Iterable[tuple[str, Status]]) -> list[NodeFailure]:
    """Node statuses grouped by equal status, nodes in the order given."""
    if isinstance(statuses, Rejections):
        return [to_failure(status, nodes) for status, nodes in statuses.groups()]
    statuses = list(statuses)  # holds the statuses, so their ids stay theirs while keyed below
    key_of: dict[int, tuple[Code, tuple[str, ...], str]] = {}  # equal statuses are often one object
    groups: dict[tuple[Code, tuple[str, ...], str], tuple[Status, list[str]]] = {}
    for name, status in statuses:
        key = key_of.get(id(status))
        if key is None:
            key = key_of[id(status)] = (status.code, tuple(status.reasons), status.plugin)
        entry = groups.get(key)
        if entry is None:
            entry = groups[key] = (status, [])
        entry[1].append(name)
    return [to_failure(status, nodes) for status, nodes in groups.values()]


def ungroup_failures(failures: Iterable[NodeFailure]) -> dict[str, Status]:
    """Node name → Status; nodes with equal statuses share one Status object."""
    out: dict[str, Status] = {}
    shared: dict[tuple[str, tuple[str, ...], str], Status] = {}
    for f in failures:
        key = (f.code, tuple(f.reasons), f.plugin)
        status = shared.get(key)
        if status is None:
            status = shared[key] = to_status(f)
        out.update(dict.fromkeys(f.nodes, status))
    return out
