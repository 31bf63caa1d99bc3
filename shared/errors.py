"""Berth's one exception tree.

- `DomainError`: the request conflicts with the cluster's rules or is malformed; retrying the same
  thing gives the same answer (`retriable = False`).
- `InfrastructureError`: a broker, database or network failure; usually worth retrying.
"""

from __future__ import annotations


class BerthError(Exception):
    """Base of every error Berth raises on purpose."""

    retriable: bool = False


class DomainError(BerthError):
    retriable = False


class InvalidInput(DomainError):
    """Bad input, naming the object, the field and the reason."""

    def __init__(self, obj: str, field: str, reason: str) -> None:
        super().__init__(f"{obj}: {field}: {reason}" if field else f"{obj}: {reason}")
        self.obj = obj
        self.field = field
        self.reason = reason


class Conflict(DomainError):
    """The change conflicts with the current state (e.g. a bind onto a node that no longer fits)."""


class NotFound(DomainError):
    """The named object does not exist."""


class InfrastructureError(BerthError):
    retriable = True


class DecodeError(DomainError):
    """A message could not be decoded or validated; it belongs in the dead-letter topic."""
