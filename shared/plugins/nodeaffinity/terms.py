"""Node selector terms compiled once per pod (component-helpers' nodeaffinity package).

Semantics kept from upstream:
- terms are ORed, a term's requirements ANDed; a term with neither expressions nor fields is
  dropped (it selects nothing), so a selector of only such terms matches no node;
- a requirement that does not parse (unknown operator, wrong value count, invalid label key or
  value, a non-integer Gt/Lt bound) makes its whole term fail to match; the errors surface only
  where upstream surfaces them (plugin args, preferred terms in PreScore);
- matchFields supports In/NotIn with exactly one value, compared to the node's fields
  (only metadata.name exists; any other key reads as "").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from shared.model import NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm

Labels = Mapping[str, str]
LabelCheck = Callable[[Labels], bool]
FieldCheck = Callable[[str], bool]

OBJECT_NAME_FIELD = "metadata.name"
_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")

_NAME_RE = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN_RE = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")
_INT64_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def parse_int64(text: str | None) -> int | None:
    """strconv.ParseInt(text, 10, 64): optional sign, decimal digits, within int64."""
    if text is None or not _INT64_RE.fullmatch(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _label_key_error(key: str) -> str | None:
    """validation.IsQualifiedName: an optional DNS-subdomain prefix, then a 63-char name."""
    prefix, sep, name = key.rpartition("/")
    if sep:
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
            return "prefix part must be a lowercase RFC 1123 subdomain"
    if not name or len(name) > 63 or not _NAME_RE.fullmatch(name):
        return "name part must consist of alphanumeric characters, '-', '_' or '.'"
    return None


def _label_value_error(value: str) -> str | None:
    if value == "":
        return None
    if len(value) > 63 or not _NAME_RE.fullmatch(value):
        return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'"
    return None


def _label_check(req: NodeSelectorRequirement, path: str) -> tuple[LabelCheck | None, list[str]]:
    key, op, values = req.key, req.operator, list(req.values)
    if op not in _LABEL_OPS:
        return None, [f'{path}.operator: Unsupported value: "{op}"']
    errs: list[str] = []
    if (err := _label_key_error(key)) is not None:
        errs.append(f'{path}.key: Invalid value: "{key}": {err}')
    if op in ("In", "NotIn") and not values:
        errs.append(f"{path}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(f"{path}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(f"{path}.values: Required value: "
                        "must be specified single value when `operator` is 'Lt' or 'Gt'")
        elif parse_int64(values[0]) is None:
            errs.append(f'{path}.values[0]: Invalid value: "{values[0]}": for \'Gt\', \'Lt\' operators, '
                        "the value must be an integer")
    for i, v in enumerate(values):
        if (err := _label_value_error(v)) is not None:
            errs.append(f'{path}.values[{i}]: Invalid value: "{v}": {err}')
    if errs:
        return None, errs
    if op == "In":
        allowed = frozenset(values)
        return (lambda labels: labels.get(key) in allowed), []
    if op == "NotIn":
        denied = frozenset(values)
        return (lambda labels: labels.get(key) not in denied), []
    if op == "Exists":
        return (lambda labels: key in labels), []
    if op == "DoesNotExist":
        return (lambda labels: key not in labels), []
    bound = parse_int64(values[0])
    assert bound is not None
    if op == "Gt":
        return (lambda labels: (v := parse_int64(labels.get(key))) is not None and v > bound), []
    return (lambda labels: (v := parse_int64(labels.get(key))) is not None and v < bound), []


def _field_check(req: NodeSelectorRequirement, path: str) -> tuple[FieldCheck | None, list[str]]:
    op, values = req.operator, req.values
    if op not in ("In", "NotIn"):
        return None, [f'{path}.operator: Unsupported value: "{op}": supported values: "In", "NotIn"']
    if len(values) != 1:
        return None, [f"{path}.values: Invalid value: {list(values)}: must have one element"]
    want = values[0]
    if req.key != OBJECT_NAME_FIELD:
        # The node exposes no other field: it reads as "".
        matched = want == ""
        return (lambda name: matched) if op == "In" else (lambda name: not matched), []
    if op == "In":
        return (lambda name: name == want), []
    return (lambda name: name != want), []


class CompiledTerm:
    """One NodeSelectorTerm: label checks and field checks ANDed, or its parse errors."""

    __slots__ = ("labels", "fields", "errors")

    def __init__(self, term: NodeSelectorTerm, path: str = "") -> None:
        self.labels: tuple[LabelCheck, ...] = ()
        self.fields: tuple[FieldCheck, ...] = ()
        self.errors: list[str] = []
        checks: list[LabelCheck] = []
        for i, req in enumerate(term.match_expressions):
            check, errs = _label_check(req, f"{path}matchExpressions[{i}]")
            self.errors.extend(errs)
            if check is not None:
                checks.append(check)
        fields: list[FieldCheck] = []
        for i, req in enumerate(term.match_fields):
            fcheck, errs = _field_check(req, f"{path}matchFields[{i}]")
            self.errors.extend(errs)
            if fcheck is not None:
                fields.append(fcheck)
        self.labels = tuple(checks)
        self.fields = tuple(fields)

    def matches(self, labels: Labels, name: str) -> bool:
        if self.errors:
            return False
        for check in self.labels:
            if not check(labels):
                return False
        if name:  # upstream skips field checks when the node has no fields
            for fcheck in self.fields:
                if not fcheck(name):
                    return False
        return True


def _is_empty(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


class NodeSelectorMatcher:
    """LazyErrorNodeSelector: ORed terms, empty ones dropped; `errors` lists every parse error."""

    __slots__ = ("terms", "errors")

    def __init__(self, terms: Sequence[NodeSelectorTerm], path: str = "") -> None:
        self.terms = tuple(
            CompiledTerm(t, f"{path}nodeSelectorTerms[{i}].") for i, t in enumerate(terms) if not _is_empty(t)
        )
        self.errors = [e for t in self.terms for e in t.errors]

    def matches(self, labels: Labels, name: str) -> bool:
        for term in self.terms:
            if term.matches(labels, name):
                return True
        return False


class PreferredTerms:
    """PreferredSchedulingTerms: weight-0 and empty terms are skipped; Score sums the weights of
    the matching terms."""

    __slots__ = ("terms", "errors")

    def __init__(self, terms: Sequence[PreferredSchedulingTerm], path: str = "") -> None:
        compiled: list[tuple[CompiledTerm, int]] = []
        self.errors: list[str] = []
        for i, t in enumerate(terms):
            if t.weight == 0 or _is_empty(t.preference):
                continue
            term = CompiledTerm(t.preference, f"{path}[{i}].")
            if term.errors:
                self.errors.extend(term.errors)
            else:
                compiled.append((term, t.weight))
        self.terms = tuple(compiled)

    def score(self, labels: Labels, name: str) -> int:
        total = 0
        for term, weight in self.terms:
            if term.matches(labels, name):
                total += weight
        return total
