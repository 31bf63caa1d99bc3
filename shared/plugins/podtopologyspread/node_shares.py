"""Each node's share of PodTopologySpread's per-domain counts, kept between cycles for pods that
count alike and brought up to date from the NodeInfo change journal: PreFilter's counts for hard
constraints (`filtering.NodeCounts`) and PreScore's sums for soft ones (`scoring.DomainTotals`)
are kept so, each summing the shares its own way."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shared.framework.node_info import NodeInfo, changed_since, journal_end

Contributions = list[tuple[int, str, int]]
"""A node's share of the counts: (constraint index, topology value, matching pods)."""


class NodeShares:
    """Each node's share as of its NodeInfo generation, and the node list the counts were summed
    over as of a position in the NodeInfo change journal."""

    __slots__ = ("per_node", "nodes", "members", "position")

    def __init__(self) -> None:
        self.per_node: dict[str, tuple[int, Contributions]] = {}
        self.nodes: Sequence[NodeInfo] | None = None
        self.members: dict[str, NodeInfo] = {}
        self.position = 0

    def share(self, node: NodeInfo, make: Callable[[NodeInfo], Contributions]) -> Contributions:
        """The node's share, made afresh only when its pods changed since it was kept."""
        hit = self.per_node.get(node.name)
        if hit is not None and hit[0] == node.generation:
            return hit[1]
        out = make(node)
        self.keep(node, out)
        return out

    def keep(self, node: NodeInfo, share: Contributions) -> None:
        self.per_node[node.name] = (node.generation, share)

    def stale(self, nodes: Sequence[NodeInfo]) -> tuple[list[tuple[NodeInfo, Contributions]], int] | None:
        """The nodes of `nodes` whose pods changed since the counts were summed, each once with its
        share as kept, and the journal's end to resume from; None when the counts cannot be
        caught up (another node list, the journal dropped that part, a node without a kept share)."""
        if self.nodes is not nodes:
            return None
        changed = changed_since(self.position)
        if changed is None:
            return None
        end = journal_end()
        out: list[tuple[NodeInfo, Contributions]] = []
        seen: set[str] = set()
        for node in changed:
            name = node.name
            if name in seen or self.members.get(name) is not node:
                continue  # counted already, or not one of these nodes (an older NodeInfo)
            seen.add(name)
            old = self.per_node.get(name)
            if old is None:
                return None
            if old[0] != node.generation:
                out.append((node, old[1]))
        return out, end

    def catch_up(self, nodes: Sequence[NodeInfo], make: Callable[[NodeInfo], Contributions]) -> bool:
        """Fold the nodes changed since the counts were summed into them (`fold`); False when
        they cannot be (`stale`, or a fold that refuses)."""
        stale = self.stale(nodes)
        if stale is None:
            return False
        changed, end = stale
        for node, old in changed:
            new = make(node)
            if not self.fold(old, new):
                return False
            self.keep(node, new)
        self.position = end
        return True

    def fold(self, old: Contributions, new: Contributions) -> bool:
        """Replace a node's `old` share by its `new` one in the counts; False when it cannot."""
        raise NotImplementedError

    def settle(self, nodes: Sequence[NodeInfo], position: int) -> None:
        """The counts are now summed over `nodes` as of `position`."""
        self.nodes, self.members, self.position = nodes, {n.name: n for n in nodes}, position
