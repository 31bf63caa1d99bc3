"""Which of a snapshot's nodes some pod is nominated to, and the nominator's stamp of each node's
nominated pods, as arrays over the node positions.

A preemption-heavy workload keeps hundreds of nodes nominated while each preemptor's victims
leave; reading every nomination for every walk cost more than the walk. The arrays follow the
nominator's change log instead, so a walk reads only what changed since the last one."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Protocol

import numpy as np
import numpy.typing as npt


class NominationLog(Protocol):
    """What a nominator that logs its changes offers (see `shared.queue.Nominator`)."""

    @property
    def version(self) -> int: ...

    @property
    def stamps(self) -> Mapping[str, int]: ...

    def changed_since(self, version: int) -> list[str] | None: ...

    def nodes_with_nominations(self) -> Collection[str]: ...


class NominatedPositions:
    """`nominated[i]`: some pod is nominated to node i; `stamp[i]`: the nominator's stamp of
    node i's nominated pods (0 before any pod was nominated there)."""

    __slots__ = ("_position", "nominated", "stamp", "_log", "_version")

    def __init__(self, position: Mapping[str, int], count: int) -> None:
        self._position = position
        self.nominated = np.zeros(count, dtype=bool)
        self.stamp = np.zeros(count, dtype=np.int64)
        self._log: NominationLog | None = None
        self._version = -1

    def follow(self, log: NominationLog) -> None:
        """Catch up with `log`: only the nodes it names as changed, or every node when it is
        another nominator or no longer reaches back to the last catch-up."""
        changed = log.changed_since(self._version) if log is self._log else None
        with_nominations, stamps, position = log.nodes_with_nominations(), log.stamps, self._position
        if changed is None:
            self.nominated[:] = False
            self.stamp[:] = 0
            changed = list(stamps)
        for name in changed:
            i = position.get(name)
            if i is not None:
                self.nominated[i] = name in with_nominations
                self.stamp[i] = stamps.get(name, 0)
        self._log, self._version = log, log.version

    def positions(self, within: npt.NDArray[np.bool_] | None = None) -> npt.NDArray[np.intp]:
        """The nominated nodes' positions, ascending (those `within` when given)."""
        return (self.nominated if within is None else self.nominated & within).nonzero()[0]


__all__ = ["NominatedPositions", "NominationLog"]
