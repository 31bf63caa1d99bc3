"""The API server's validation rules for the fields Berth reads, worded as upstream words them
(k8s.io/apimachinery/pkg/util/validation and pkg/apis/core/validation). Each check raises
`InvalidInput(object, field path, rule)`."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from shared.errors import InvalidInput

from . import quantity
from .meta import ObjectMeta

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL = re.compile(f"^{_LABEL}$")
_DNS1123_SUBDOMAIN = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

SUBDOMAIN_RULE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                  r"validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_RULE = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
              "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
              "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
NAME_PART_RULE = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                  "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                  "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE_RULE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
                    "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
ANNOTATIONS_MAX_BYTES = 256 * 1024


def _invalid(value: object, rule: str) -> str:
    return f'Invalid value: "{value}": {rule}'


def check_subdomain(what: str, path: str, value: str) -> None:
    if len(value) > 253:
        raise InvalidInput(what, path, _invalid(value, "must be no more than 253 characters"))
    if not _DNS1123_SUBDOMAIN.match(value):
        raise InvalidInput(what, path, _invalid(value, SUBDOMAIN_RULE))


def check_dns_label(what: str, path: str, value: str) -> None:
    if len(value) > 63:
        raise InvalidInput(what, path, _invalid(value, "must be no more than 63 characters"))
    if not _DNS1123_LABEL.match(value):
        raise InvalidInput(what, path, _invalid(value, LABEL_RULE))


def check_qualified_name(what: str, path: str, key: str) -> None:
    """A label key (or a selector's): an optional DNS subdomain prefix and "/", then a name part."""
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix:
            raise InvalidInput(what, path, _invalid(key, "prefix part must be non-empty"))
        check_subdomain(what, path, prefix)
    if not name:
        raise InvalidInput(what, path, _invalid(key, "name part must be non-empty"))
    if len(name) > 63:
        raise InvalidInput(what, path, _invalid(key, "name part must be no more than 63 characters"))
    if not _QUALIFIED_NAME.match(name):
        raise InvalidInput(what, path, _invalid(key, NAME_PART_RULE))


def check_labels(what: str, path: str, labels: Mapping[str, str]) -> None:
    for key, value in labels.items():
        check_qualified_name(what, path, key)
        if len(value) > 63:
            raise InvalidInput(what, f"{path}[{key}]", _invalid(value, "must be no more than 63 characters"))
        if not _LABEL_VALUE.match(value):
            raise InvalidInput(what, f"{path}[{key}]", _invalid(value, LABEL_VALUE_RULE))


def require_name(what: str, meta: ObjectMeta) -> None:
    """An object must be named by now: a create names one from its generateName before validation,
    and nothing else does (an apply, a file for `berth apply` or `berth simulate`)."""
    if meta.name:
        return
    if meta.generate_name:
        raise InvalidInput(what, "metadata.name", "Required value: generateName names an object on a create "
                           "(kubectl create, a POST) alone; an apply needs a name")
    raise InvalidInput(what, "metadata.name", "Required value: name or generateName is required")


def check_meta(what: str, meta: ObjectMeta, *, namespaced: bool, name_rule: str = "subdomain") -> None:
    """Name (a DNS subdomain, or a DNS label for a Namespace), namespace, label and annotation keys."""
    require_name(what, meta)
    (check_dns_label if name_rule == "label" else check_subdomain)(what, "metadata.name", meta.name)
    if namespaced and meta.namespace:
        check_dns_label(what, "metadata.namespace", meta.namespace)
    check_labels(what, "metadata.labels", meta.labels)
    for key in meta.annotations:
        check_qualified_name(what, "metadata.annotations", key.lower())


def check_annotations_size(what: str, meta: ObjectMeta) -> None:
    size = sum(len(k.encode()) + len(v.encode()) for k, v in meta.annotations.items())
    if size > ANNOTATIONS_MAX_BYTES:
        raise InvalidInput(what, "metadata.annotations", f"Too long: must have at most {ANNOTATIONS_MAX_BYTES} bytes")


def check_resource_list(what: str, path: str, values: Mapping[str, str | int | float]) -> None:
    """Each quantity parses and is not negative."""
    for name, q in values.items():
        try:
            parsed = quantity.parse_quantity(q)
        except quantity.QuantityError as exc:
            raise InvalidInput(what, f"{path}[{name}]", str(exc)) from None
        if parsed < 0:
            raise InvalidInput(what, f"{path}[{name}]", _invalid(q, "must be greater than or equal to 0"))


def check_requests_within_limits(what: str, path: str, requests: Mapping[str, Any], limits: Mapping[str, Any]) -> None:
    for name, q in requests.items():
        if name in limits and quantity.parse_quantity(q) > quantity.parse_quantity(limits[name]):
            raise InvalidInput(what, f"{path}.requests", _invalid(q, f"must be less than or equal to {name} limit of "
                                                                     f"{limits[name]}"))


def check_unique_names(what: str, path: str, names: Sequence[str]) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if not name:
            raise InvalidInput(what, f"{path}[{i}].name", "Required value")
        if name in seen:
            raise InvalidInput(what, f"{path}[{i}].name", f'Duplicate value: "{name}"')
        seen.add(name)


class FieldErrors:
    """One object's field errors, gathered: the API server reports every one at once. A `section`
    stops at its first error, since its later checks may read what that one found wrong."""

    def __init__(self) -> None:
        self.found: list[InvalidInput] = []

    @contextlib.contextmanager
    def section(self) -> Iterator[None]:
        try:
            yield
        except InvalidInput as exc:
            self.found += [exc, *exc.also]

    def raise_found(self) -> None:
        """InvalidInput naming the first error found, with the others (`also`), if any was."""
        if self.found:
            first, *rest = self.found
            raise InvalidInput(first.obj, first.field, first.reason, also=tuple(rest))


NameValidation = Literal["Strict", "Warn"]


class Checks:
    """The checks of object identity (names, namespaces, labels, container names): refused under
    Strict, recorded in `warnings` under Warn. The other rules are always enforced."""

    def __init__(self, mode: NameValidation = "Strict", warnings: list[str] | None = None) -> None:
        self.mode = mode
        self.warnings = warnings if warnings is not None else []

    def _run(self, check: Callable[[], None]) -> None:
        try:
            check()
        except InvalidInput as exc:
            if self.mode == "Strict":
                raise
            self.warnings.append(f"{exc} (a cluster's API refuses it)")

    def meta(self, what: str, meta: ObjectMeta, *, namespaced: bool, name_rule: str = "subdomain") -> None:
        self._run(lambda: check_meta(what, meta, namespaced=namespaced, name_rule=name_rule))
        check_annotations_size(what, meta)

    def name(self, check: Callable[[str, str, str], None], what: str, path: str, value: str) -> None:
        self._run(lambda: check(what, path, value))

    def container_names(self, what: str, containers: Sequence[Any], init_containers: Sequence[Any]) -> None:
        def check() -> None:
            check_unique_names(what, "spec.containers", [c.name for c in containers])
            check_unique_names(what, "spec.initContainers", [c.name for c in init_containers])
            regular = {c.name for c in containers}
            for i, c in enumerate(init_containers):
                if c.name in regular:
                    raise InvalidInput(what, f"spec.initContainers[{i}].name", f'Duplicate value: "{c.name}"')
            for group, items in (("containers", containers), ("initContainers", init_containers)):
                for i, c in enumerate(items):
                    check_dns_label(what, f"spec.{group}[{i}].name", c.name)
        self._run(check)
