"""Plugin outcomes: a `Status` with upstream's codes. "No fit" is a status, never an exception.

As upstream's nil *Status, `None` means Success on the hot paths (Filter, Score); helpers below
treat `None` and a Success status alike.
"""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6


REJECTED_CODES = frozenset((Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING))


class Status:
    __slots__ = ("code", "reasons", "plugin", "error")

    def __init__(self, code: Code, *reasons: str, plugin: str = "", error: BaseException | None = None) -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin
        self.error = error

    def message(self) -> str:
        """Reasons joined by ", " (Status.Message)."""
        return ", ".join(self.reasons)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in REJECTED_CODES

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))

    def __repr__(self) -> str:
        plugin = f", plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code.name}, {list(self.reasons)!r}{plugin})"


def success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, *reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)


def as_status(error: BaseException) -> Status:
    return Status(Code.ERROR, str(error), error=error)


SKIP = Status(Code.SKIP)
