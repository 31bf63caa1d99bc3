"""Label and node selector matching, compiled once and evaluated many times.

Semantics follow apimachinery's `labels.Selector`: a nil label selector matches nothing, an empty
one matches everything; NotIn and DoesNotExist match when the key is absent. (Node selector terms
are matched by NodeAffinity's `NodeSelectorMatcher`.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from .meta import LabelSelector

Labels = Mapping[str, str]
Predicate = Callable[[Labels], bool]


class Selector:
    """A compiled label selector: `matches(labels)` is cheap and allocation-free."""

    __slots__ = ("_checks", "empty", "nothing", "text")

    def __init__(self, checks: tuple[Predicate, ...], *, nothing: bool = False, text: str = "") -> None:
        self._checks = checks
        self.nothing = nothing
        self.empty = not checks and not nothing
        self.text = text

    def matches(self, labels: Labels) -> bool:
        if self.nothing:
            return False
        for check in self._checks:
            if not check(labels):
                return False
        return True

    def __repr__(self) -> str:
        return f"Selector({self.text or ('<nothing>' if self.nothing else '<everything>')})"


NOTHING: Final = Selector((), nothing=True)
EVERYTHING: Final = Selector(())


def _requirement(key: str, operator: str, values: list[str]) -> Predicate:
    value_set = frozenset(values)
    if operator == "In":
        return lambda labels: labels.get(key) in value_set
    if operator == "NotIn":
        return lambda labels: labels.get(key) not in value_set
    if operator == "Exists":
        return lambda labels: key in labels
    if operator == "DoesNotExist":
        return lambda labels: key not in labels
    raise ValueError(f"{operator!r} is not a valid selector operator")


def compile_label_selector(selector: LabelSelector | None) -> Selector:
    """metav1.LabelSelectorAsSelector: nil matches nothing, {} matches everything."""
    if selector is None:
        return NOTHING
    checks: list[Predicate] = []
    parts: list[str] = []
    for key, val in sorted(selector.match_labels.items()):
        checks.append(_requirement(key, "In", [val]))
        parts.append(f"{key}={val}")
    for req in selector.match_expressions:
        if req.operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise ValueError(f"{req.operator!r} is not a valid label selector operator")
        checks.append(_requirement(req.key, req.operator, list(req.values)))
        parts.append(f"{req.key} {req.operator} {list(req.values)}")
    return Selector(tuple(checks), text=",".join(parts))


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """labels.SelectorFromSet: an exact match on every pair (an empty set matches everything)."""
    checks = tuple(_requirement(k, "In", [v]) for k, v in sorted(labels.items()))
    return Selector(checks, text=",".join(f"{k}={v}" for k, v in sorted(labels.items())))
