"""Berth's one exception tree.

Every error Berth raises on purpose is a `BerthError`. Each class says whether retrying the same
operation can succeed (`retriable`): the service runtime backs off and retries retriable errors, and
dead-letters the message on any other.

    BerthError
    ├── DomainError                 the request or event is wrong; retrying cannot help
    │   ├── InvalidInput            bad user input or a malformed object (obj, field, reason)
    │   ├── DecodeError             bytes that are not a valid event for their topic
    │   └── Conflict                the request clashes with the current state
    │       ├── NotFound
    │       └── AlreadyExists
    └── InfrastructureError         something around Berth failed; usually worth a retry
        ├── BrokerUnavailable       Kafka cannot be reached or refused a write
        ├── DatabaseUnavailable     Postgres cannot be reached or aborted a transaction
        ├── ConfigurationError      settings that cannot work (not retriable)
        └── EmbeddedStackError      the embedded broker or database failed to start (not retriable)

"No fit" is never an exception: the scheduling core reports it as a `Status`.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "AlreadyExists",
    "BerthError",
    "BrokerUnavailable",
    "ConfigurationError",
    "Conflict",
    "DatabaseUnavailable",
    "DecodeError",
    "DomainError",
    "EmbeddedStackError",
    "InfrastructureError",
    "InvalidInput",
    "NotFound",
    "RecordTooLarge",
    "is_retriable",
]


class BerthError(Exception):
    """Base of every error Berth raises on purpose."""

    retriable: ClassVar[bool] = False


# --- domain ------------------------------------------------------------------------------------


class DomainError(BerthError):
    """The input or the requested change is wrong; the same call will fail again."""


class InvalidInput(DomainError):
    """A field of an object (a Pod, a Node, a configuration, a CLI flag) has an invalid value.

    `str()` reads like upstream's validation errors: ``Pod default/p: spec.priority: expected an integer``.
    `also`: the same object's other invalid fields, found by checks that went on past this one (the
    API server reports every field error of an object at once); `str()` adds them on the same line.
    """

    def __init__(self, obj: str, field: str, reason: str, also: tuple[InvalidInput, ...] = ()) -> None:
        self.obj = obj
        self.field = field
        self.reason = reason
        self.also = also
        super().__init__(obj, field, reason)

    def __str__(self) -> str:
        parts = [p for p in (self.obj, self.field, self.reason) if p]
        return "; ".join([": ".join(parts), *(": ".join(p for p in (e.field, e.reason) if p) for e in self.also)])


class DecodeError(DomainError):
    """Bytes read from a topic are not a valid event for it (wrong codec, schema or union member).

    `topic` is the logical topic name the bytes came from, or "" when unknown.
    """

    def __init__(self, reason: str, *, topic: str = "") -> None:
        self.reason = reason
        self.topic = topic
        super().__init__(reason)

    def __str__(self) -> str:
        return f"cannot decode event from topic {self.topic!r}: {self.reason}" if self.topic else self.reason


class GapRecord(DecodeError):
    """The record holds no event: it fills an offset when a log is rebuilt from the event store
    (`shared.events.codec.GAP`). Readers skip it without a dead letter."""


class Conflict(DomainError):
    """The request is well formed but clashes with the current state."""


class NotFound(Conflict):
    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f'{kind} "{name}" not found')


class AlreadyExists(Conflict):
    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f'{kind} "{name}" already exists')


class Forbidden(DomainError):
    """The request names an object the API never lets it touch so (the default namespace's deletion)."""

    def __init__(self, kind: str, name: str, why: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f'{kind} "{name}" is forbidden: {why}')


class RecordTooLarge(DomainError):
    """An event is larger than the largest record the services may publish: publishing it again
    fails again (the broker is not at fault)."""


# --- infrastructure ----------------------------------------------------------------------------


class InfrastructureError(BerthError):
    """Kafka, Postgres or a process around Berth failed. Retriable unless a subclass says otherwise."""

    retriable: ClassVar[bool] = True


class BrokerUnavailable(InfrastructureError):
    """The Kafka broker cannot be reached, or it refused or timed out a produce/commit."""


class DatabaseUnavailable(InfrastructureError):
    """Postgres cannot be reached, or it aborted a transaction (serialization failure, deadlock)."""


class ConfigurationError(InfrastructureError):
    """Settings that cannot work (a malformed URL, a missing binary); fix the environment first."""

    retriable: ClassVar[bool] = False


class EmbeddedStackError(InfrastructureError):
    """The embedded broker or database did not start or answer in time."""

    retriable: ClassVar[bool] = False


def is_retriable(error: BaseException) -> bool:
    """Whether retrying the operation that raised `error` may succeed.

    Errors from outside the tree are treated as not retriable: an unknown failure is a bug until
    shown otherwise, and retrying it forever would stall a partition.
    """
    return isinstance(error, BerthError) and error.retriable
