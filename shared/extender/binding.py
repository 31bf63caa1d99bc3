"""Upstream's extendersBinding: which extender binds a pod instead of the Bind plugins."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from shared.framework.pod_info import PodInfo

from .translate import ExtenderError


class BindingExtender(Protocol):
    """The part of an extender the bind step calls."""

    def is_binder(self) -> bool: ...

    def is_interested(self, pod: PodInfo) -> bool: ...

    def is_ignorable(self) -> bool: ...

    def bind(self, pod: PodInfo, node_name: str) -> None: ...


def extenders_binding(extenders: Sequence[BindingExtender], pod: PodInfo, node_name: str) -> tuple[bool, str]:
    """The first interested binder binds (an ignorable one that fails is passed over). (True, "")
    bound; (True, error) the binder refused; (False, "") no binder: the Bind plugins bind."""
    for ext in extenders:
        if not ext.is_binder() or not ext.is_interested(pod):
            continue
        try:
            ext.bind(pod, node_name)
        except ExtenderError as exc:
            if ext.is_ignorable():
                continue
            return True, str(exc)
        return True, ""
    return False, ""
