"""Label and node selector matching, compiled once and evaluated many times.

Semantics follow apimachinery's `labels.Selector`: a nil label selector matches nothing, an empty
one matches everything; NotIn and DoesNotExist match when the key is absent. (Node selector terms
are matched by NodeAffinity's `NodeSelectorMatcher`.)
"""

from __future__ import annotations

import re
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


_SET_REQUIREMENT = re.compile(r"^\s*(?P<key>[^\s!=(),]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)\s*$")
_EQUALITY = re.compile(r"^\s*(?P<key>[^\s!=(),]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)\s*$")
_EXISTS = re.compile(r"^\s*(?P<not>!)?\s*(?P<key>[^\s!=(),]+)\s*$")


def parse_selector(text: str) -> Selector:
    """A label selector in kubectl's `-l` syntax (labels.Parse): `a=b`, `a==b`, `a!=b`,
    `a in (x,y)`, `a notin (x)`, `a`, `!a`, joined by commas. ValueError names what is wrong."""
    checks: list[Predicate] = []
    for part in _split_requirements(text):
        if m := _SET_REQUIREMENT.match(part):
            values = [v.strip() for v in m["values"].split(",") if v.strip()]
            checks.append(_requirement(m["key"], "In" if m["op"] == "in" else "NotIn", values))
        elif m := _EQUALITY.match(part):
            checks.append(_requirement(m["key"], "NotIn" if m["op"] == "!=" else "In", [m["value"]]))
        elif m := _EXISTS.match(part):
            checks.append(_requirement(m["key"], "DoesNotExist" if m["not"] else "Exists", []))
        else:
            raise ValueError(f"unable to parse requirement: {part.strip()!r}")
    return Selector(tuple(checks), text=text.strip())


def _split_requirements(text: str) -> list[str]:
    """Split on the commas outside parentheses; an empty selector is no requirement."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()] if text.strip() else []
