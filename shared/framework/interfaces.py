"""Extension-point interfaces. A plugin subclasses `Plugin` and the point classes it implements.

Conventions (as upstream's framework/interface.go):
- `pod` arguments are `PodInfo` (the pod plus precomputed requests and affinity terms).
- A returned `None` status means Success. "Does not fit" is a Status, never an exception.
- PreFilter may return a `PreFilterResult` naming the only nodes worth evaluating.
- PreFilter/PreScore returning a SKIP status make the framework skip that plugin's Filter/Score.
- State written to CycleState must offer `clone()` (preemption clones the state per node).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from .cycle_state import CycleState
from .node_info import NodeInfo
from .pod_info import PodInfo
from .status import Status

if TYPE_CHECKING:
    from .snapshot import Snapshot

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


class PreFilterResult:
    """The node names PreFilter found worth evaluating; `None` node_names means all nodes."""

    __slots__ = ("node_names",)

    def __init__(self, node_names: set[str] | None) -> None:
        self.node_names = node_names

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.node_names is None:  # all nodes
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult(self.node_names & (other.node_names or set()))


class NodeScore:
    __slots__ = ("name", "score")

    def __init__(self, name: str, score: int) -> None:
        self.name = name
        self.score = score

    def __repr__(self) -> str:
        return f"NodeScore({self.name}, {self.score})"


class PluginScore:
    __slots__ = ("name", "score")

    def __init__(self, name: str, score: int) -> None:
        self.name = name
        self.score = score


class NodePluginScores:
    """A node's weighted score per plugin and their total."""

    __slots__ = ("name", "scores", "total_score")

    def __init__(self, name: str, scores: list[PluginScore], total_score: int) -> None:
        self.name = name
        self.scores = scores
        self.total_score = total_score

    def __repr__(self) -> str:
        return f"NodePluginScores({self.name}, total={self.total_score})"


class PostFilterResult:
    """The outcome of PostFilter (preemption). The core stays pure: the caller carries out the
    evictions and nomination changes this describes.

    - nominated_node_name: where the preemptor should go next ("" clears its nomination);
    - victims: pods to evict from that node;
    - nominations_to_clear: lower-priority pods nominated to that node that lose their nomination.
    """

    __slots__ = ("nominated_node_name", "victims", "nominations_to_clear")

    def __init__(self, nominated_node_name: str = "", victims: Sequence[PodInfo] = (),
                 nominations_to_clear: Sequence[PodInfo] = ()) -> None:
        self.nominated_node_name = nominated_node_name
        self.victims = list(victims)
        self.nominations_to_clear = list(nominations_to_clear)

    def __repr__(self) -> str:
        return (f"PostFilterResult(node={self.nominated_node_name!r}, victims={[v.key for v in self.victims]}, "
                f"clear={[p.key for p in self.nominations_to_clear]})")


class PodNominator(Protocol):
    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...


class Handle(Protocol):
    """What plugins may ask of the framework running them."""

    def snapshot(self) -> Snapshot: ...

    def nominator(self) -> PodNominator: ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None: ...

    def pod_disruption_budgets(self) -> list[Any]:
        """The cluster's PodDisruptionBudget objects (shared.model.PodDisruptionBudget)."""
        ...

    def extenders(self) -> list[Any]:
        """The configured scheduler extenders (for the preempt verb)."""
        ...

    @property
    def profile_name(self) -> str: ...


class Plugin:
    """Base of every plugin: a unique NAME and a factory `new(args, handle)`."""

    NAME: ClassVar[str] = ""
    # True when Filter and Score depend only on the pod's spec, the plugin's args and the NodeInfo
    # (not on other nodes or cluster-wide counts), and PreFilter and PreScore on the pod alone: the framework
    # may then reuse a result for an identical pod on a node whose state has not changed since.
    NODE_LOCAL: ClassVar[bool] = False
    # True when Score depends on the pod, the NodeInfo and indexes fixed for a snapshot's life
    # (ImageLocality's image spread): a result is reused only within the same snapshot.
    SNAPSHOT_LOCAL: ClassVar[bool] = False
    # True when Score reads nothing the pods on the node change (its taints, labels, images): a
    # pod placed on the node leaves the score as it was.
    SCORE_IGNORES_NODE_PODS: ClassVar[bool] = False

    def checks_nothing_for(self, pod: PodInfo) -> bool:
        """True when this plugin's PreFilter and Filter, run in one cycle, pass `pod` on every
        node of the current snapshot, having nothing to check for it there (a plugin that is not
        NODE_LOCAL says so where it can: a node's earlier Filter verdict for the pod then stands
        while the node is unchanged, `Framework.pre_filter_alike`)."""
        return False

    def scores_nothing_for(self, pod: PodInfo) -> bool:
        """True when this plugin's PreScore skips `pod` on the current snapshot (a plugin that is
        not NODE_LOCAL says so where it can: PreScore's outcome for the pod is then its spec's
        alone, `Framework.pre_score_alike`)."""
        return False

    name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = cls.NAME  # a plain attribute: read on every plugin call

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> Plugin:
        return cls()


class PreEnqueuePlugin(Plugin):
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        raise NotImplementedError


class QueueSortPlugin(Plugin):
    def less(self, a: Any, b: Any) -> bool:
        """Whether queued pod `a` is scheduled before queued pod `b` (QueuedPodInfo-like objects)."""
        raise NotImplementedError

    def rank_of(self) -> Callable[[Any], Any] | None:
        """A function giving a queued pod a rank that `<` orders exactly as `less` orders the
        pods (the active queue's heap then compares ranks instead of calling `less`), or None."""
        return None


class PreFilterExtensions:
    """Incremental updates of PreFilter state when a pod is added to or removed from a node."""

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        raise NotImplementedError

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        raise NotImplementedError


class PreFilterPlugin(Plugin):
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        raise NotImplementedError

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None


class FilterPlugin(Plugin):
    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        raise NotImplementedError

    def verdict_labels(self, state: CycleState) -> tuple[str, ...] | None:
        """The node labels whose values alone decide Filter's verdict in this cycle (its
        PreFilter state given), or None when more of the node matters. A walk then asks once per
        distinct combination of values."""
        return None


class PostFilterPlugin(Plugin):
    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        raise NotImplementedError


class PreScorePlugin(Plugin):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        raise NotImplementedError

    def pre_score_reads_nodes(self, pod: PodInfo) -> bool:
        """Whether PreScore's outcome for `pod` depends on which nodes passed Filter (beyond there
        being some). When it does not, a shard can score its own feasible nodes in the same pass
        as Filter; the default is the safe answer."""
        return True


class ScoreExtensions:
    # (max priority, reverse) when normalize_score is upstream's helper.DefaultNormalizeScore:
    # callers holding scores in arrays may then normalize them without NodeScore objects.
    DEFAULT_NORMALIZE: ClassVar[tuple[int, bool] | None] = None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        raise NotImplementedError


class ScorePlugin(Plugin):
    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        raise NotImplementedError

    def score_extensions(self) -> ScoreExtensions | None:
        return None


class ReservePlugin(Plugin):
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        raise NotImplementedError

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        raise NotImplementedError


class PermitPlugin(Plugin):
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        """A status and, for WAIT, how many seconds to wait."""
        raise NotImplementedError


class PreBindPlugin(Plugin):
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        raise NotImplementedError


class BindPlugin(Plugin):
    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """SKIP hands the pod to the next bind plugin."""
        raise NotImplementedError


class PostBindPlugin(Plugin):
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        raise NotImplementedError


class EnqueueExtensions(Plugin):
    """Plugins that reject pods say which cluster events may make those pods schedulable again."""

    def events_to_register(self) -> list[Any]:
        """The cluster events (`shared.framework.events.ClusterEvent`, or (resource, action-type
        bitmask) pairs) that may make a pod this plugin rejected schedulable again."""
        raise NotImplementedError
