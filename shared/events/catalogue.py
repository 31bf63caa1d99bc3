"""Every event Berth publishes, by topic. Names are past tense: an event states what happened.

Each payload is a tagged msgspec Struct: on the wire it carries ``"type": "<ClassName>"``, which
makes the per-topic unions below decodable without guessing. `partition_key()` names the Kafka key
each event is published under (ARCHITECTURE §3): node events by node name, pod events by pod uid.

Objects Kubernetes defines travel as `shared.model.Pod` / `shared.model.Node`, with Kubernetes'
JSON field names, so an event's JSON rendering reads like the API server's.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from shared.model import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass
from shared.model.config import KubeSchedulerConfiguration

StatusCode: TypeAlias = Literal[
    "Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending"
]
"""A framework `Status` code by upstream's name (`Code.String()`)."""

FilterPhase: TypeAlias = Literal["prefilter", "filter", "score"]

TopologyCounts: TypeAlias = dict[str, dict[str, dict[str, int]]]
"""plugin name → counter name → topology value → count, e.g.
``{"PodTopologySpread": {"zone": {"a": 2, "b": 0}}}``. Shards send partial counts; the queue sums them
and sends the merged counts back in the filter phase (ARCHITECTURE §4, global state under sharding)."""


class Event(msgspec.Struct, tag=True, frozen=True, kw_only=True, gc=False):
    """Base of every payload; the tag is the class name. Untracked by the garbage collector, as the
    model's objects are (`shared.model.base.K8s`)."""

    def partition_key(self) -> str:
        raise NotImplementedError


class Part(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """A building block of a payload (not an event itself)."""


# --- nodes (key: node name) ---------------------------------------------------------------------


class NodeUpserted(Event, frozen=True):
    """A node was created or replaced; `node` is its whole new state."""

    node: Node

    def partition_key(self) -> str:
        return self.node.metadata.name


class NodeDeleted(Event, frozen=True):
    node_name: str

    def partition_key(self) -> str:
        return self.node_name


# --- pods (key: pod uid) ------------------------------------------------------------------------


class PodSubmitted(Event, frozen=True):
    """A pod was created. With `spec.nodeName` set it is already running on that node."""

    pod: Pod

    def partition_key(self) -> str:
        return self.pod.metadata.uid


class PodDeleted(Event, frozen=True):
    uid: str
    namespace: str
    name: str

    def partition_key(self) -> str:
        return self.uid


class PodNominated(Event, frozen=True):
    """Preemption nominated `node_name` for the pod; an empty name clears the nomination."""

    uid: str
    node_name: str
    request_at: int = -1
    """The deciding request's offset on `preemption-requests` (`PreemptionDecided.request_at`):
    of a pod's nominations, made here or by an eviction for it, the latest decision's holds."""

    def partition_key(self) -> str:
        return self.uid


class PodEvicted(Event, frozen=True):
    """The pod (`uid`) was preempted from `node_name` to make room for `preemptor_uid`.

    Keyed by the victim, it can be read before the preemptor's PodNominated (keyed by the
    preemptor): with `request_at` known it nominates the preemptor too, so the room it frees is
    never free for pods the nomination holds off."""

    uid: str
    preemptor_uid: str
    node_name: str
    request_at: int = -1
    """As PodNominated's: the deciding request's offset, -1 when not known."""

    def partition_key(self) -> str:
        return self.uid


# --- policies, on the pods topic (key: "priorityclass/<name>", "pdb/<namespace>/<name>",
# "namespace/<name>") ------------------------------------------------------------------------------
# They ride on `pods` because the services that need them (queue, preemption) consume it already.


class PriorityClassUpserted(Event, frozen=True):
    """A PriorityClass was created or replaced. Pods carry their resolved priority already; the
    class matters to pods submitted later and to `berth get`."""

    priority_class: PriorityClass

    def partition_key(self) -> str:
        return f"priorityclass/{self.priority_class.metadata.name}"


class PriorityClassDeleted(Event, frozen=True):
    name: str

    def partition_key(self) -> str:
        return f"priorityclass/{self.name}"


class PodDisruptionBudgetUpserted(Event, frozen=True):
    """A PodDisruptionBudget was created or replaced (preemption prefers victims it does not protect)."""

    pdb: PodDisruptionBudget

    def partition_key(self) -> str:
        return f"pdb/{self.pdb.metadata.namespace}/{self.pdb.metadata.name}"


class PodDisruptionBudgetDeleted(Event, frozen=True):
    namespace: str
    name: str

    def partition_key(self) -> str:
        return f"pdb/{self.namespace}/{self.name}"


class NamespaceUpserted(Event, frozen=True):
    """A Namespace was created or its labels changed (pod affinity's namespaceSelector reads them);
    labelled with its own name, as the API server stores it."""

    namespace: Namespace

    def partition_key(self) -> str:
        return f"namespace/{self.namespace.metadata.name}"


class NamespaceDeleted(Event, frozen=True):
    name: str

    def partition_key(self) -> str:
        return f"namespace/{self.name}"


# --- filter-requests (co-partitioned with nodes; one copy per partition) -----------------------


class PodCounts(Part, frozen=True):
    """The topology counts one pod's PreFilter needs, partial (from a shard) or merged."""

    pod_uid: str
    counts: TopologyCounts = {}


class Assumed(Part, frozen=True):
    """A pod the queue has decided on (bind requested) but whose outcome it has not folded yet."""

    pod_uid: str
    node_name: str


class FilterBatchRequested(Event, frozen=True):
    """Evaluate `pods` on every node of the receiving shard (one copy per partition), or, when
    `whole`, on every node (one copy, to the partition the queue chose: one worker walks the whole
    cluster for the batch, and other batches go to other workers).

    The receiver first folds the log up to `watermark` (logical topic → next offset per partition
    the queue had folded) and overlays `assumed`, so it evaluates exactly the queue's view.
    Phase "filter": PreFilter, then Filter from the round-robin index `starts[i]`; phase "score":
    raw Score of `feasible[i]` (the merged feasible nodes; PreScore sees all of them).

    `propose` (whole batches): also decide the batch there as the queue would, in order, each pod
    placed where it is proposed before the next is ranked, `seeds[i]` breaking pod i's ties, and
    answer with the decisions (shared.protocol.proposing).
    """

    batch_id: str
    cycle: int
    phase: FilterPhase
    pods: list[Pod]
    prefilter: list[PodCounts] = []
    starts: list[int] = []
    feasible: list[list[str]] = []
    watermark: dict[str, list[int]] = {}
    assumed: list[Assumed] = []
    whole: bool = False
    propose: bool = False
    seeds: list[int] = []
    answer_partition: int | None = None
    """The `shard-results` partition to answer on: the asking queue's, where several share the
    cluster (None: keyed by batch id)."""

    def partition_key(self) -> str:
        return self.batch_id


# --- shard-results (key: batch id) --------------------------------------------------------------


class NodeFailure(Part, frozen=True):
    """Why `nodes` do not fit a pod: one framework Status (code, reasons, plugin) shared by every
    node listed. Grouped because thousands of nodes usually fail for a handful of reasons.
    `at`: in a packed shard answer, the nodes as runs of positions instead (see PodShardResult)."""

    code: StatusCode
    reasons: list[str] = []
    plugin: str = ""
    nodes: list[str] = []
    at: list[int] = []


class PodShardResult(Part, frozen=True):
    """One pod on one shard.

    `feasible`: nodes that passed every filter, in walk order; `scores`: when `scored`, each score
    plugin's raw (not yet normalized) score per feasible node, aligned with `feasible` (a shard
    scores in the filter phase when the pod's PreScore does not read the feasible set).
    `prefilter`: PreFilter's rejection (every node fails with it); `prefilter_nodes`: PreFilter's
    node subset (None: all nodes); `rejectors`: plugins whose PreFilter rejected; `nominated`: the
    nominated node's own status when it is on this shard and fails (None: passes or not here);
    `error`: a plugin error that fails the attempt; `score_error`: a PreScore or Score error, which
    fails it only when the merged walk found more than one feasible node (a lone node is not scored).

    Packed (a filter worker's answer at the request's watermark): `feasible_at` holds the feasible
    nodes as runs [first, count, …] of positions in the view's node order, `score_runs` each plugin's
    column as runs [value, count, …], and each failure's `at` its nodes as runs of positions; the
    name fields are then empty (shared.protocol.packing).

    `same_as`: this pod's answer is the answer of that pod, earlier in the same ShardFiltered (pods
    only their names tell apart, shared.protocol.same_answers); every other field is then empty.

    `ranked` (an answer to a proposing request, for a pod some node fits): the nodes to try in
    order, the one the worker placed it on first; `walked`: the nodes its walk processed (what
    the round-robin start moves by), also beside an `error` its ranking failed with. Every other
    field is then empty."""

    pod_uid: str
    feasible: list[str] = []
    scores: dict[str, list[int]] = {}
    scored: bool = False
    score_error: str = ""
    failures: list[NodeFailure] = []
    prefilter: NodeFailure | None = None
    prefilter_nodes: list[str] | None = None
    rejectors: list[str] = []
    nominated: NodeFailure | None = None
    error: str = ""
    feasible_at: list[int] = []
    score_runs: dict[str, list[int]] = {}
    same_as: str = ""
    ranked: list[str] = []
    walked: int = 0


class ShardFiltered(Event, frozen=True):
    """One shard's answer to a FilterBatchRequested: per pod, feasible and failed nodes."""

    batch_id: str
    cycle: int
    shard: int
    phase: FilterPhase
    node_count: int
    results: list[PodShardResult] = []
    counts: list[PodCounts] = []
    shards: list[int] = []
    """Every shard this answer covers (a worker evaluates the shards it fetched together as one
    walk); empty means just `shard`."""
    folded: dict[str, list[int]] = {}
    """Set only when the worker's view was not at the request's watermark: past it (it cannot fold
    backwards), or short of it (the wait for it ran out): the positions it evaluated at instead.
    The queue re-checks such a batch's pods where they go; replay reports such answers."""
    owned: list[int] = []
    """The `filter-requests` partitions the answering worker owned when it answered: partitions
    one worker owns are one place to send a whole batch (the queue spreads batches over workers)."""
    proposed: bool = False
    """The results are the batch's decisions on the request's view (its `propose`), made where the
    worker's view was at the watermark; otherwise they are the walks, which the queue decides."""

    def partition_key(self) -> str:
        return self.batch_id


# --- binds (key: node name) ---------------------------------------------------------------------


class BindRequested(Event, frozen=True):
    """The queue chose `node_name` for the pod; the node's binder must re-check fit and commit."""

    pod_uid: str
    pod: Pod
    node_name: str
    attempt_id: str
    seed: int

    def partition_key(self) -> str:
        return self.node_name


# --- placements (key: node name) ----------------------------------------------------------------


class PodBound(Event, frozen=True):
    pod_uid: str
    node_name: str
    attempt_id: str

    def partition_key(self) -> str:
        return self.node_name


class BindRejected(Event, frozen=True):
    """The binder refused a bind (the node no longer fits); the pod goes back to the queue.

    For a pod created with `spec.nodeName` (an admission, `shared.binding.admission`): `reason` is
    the kubelet's message and `status_reason` its reason (`OutOfcpu`, `NodePorts`): the pod has
    failed. An admission refused with an empty `status_reason` (no such node yet) leaves it Pending."""

    pod_uid: str
    node_name: str
    attempt_id: str
    reason: str
    status_reason: str = ""

    def partition_key(self) -> str:
        return self.node_name


# --- preemption-requests (one partition) and preemption (key: preemptor pod uid) ----------------


class PodRef(Part, frozen=True):
    uid: str
    namespace: str = ""
    name: str = ""


class PreemptionRequested(Event, frozen=True):
    """Scheduling `pod` failed with these per-node statuses; try to make room by preemption."""

    pod: Pod
    node_statuses: list[NodeFailure] = []
    attempt_id: str = ""
    seed: int = 0
    """The attempt's seed: preemption's random candidate offset is drawn from it."""
    watermark: dict[str, list[int]] = {}
    assumed: list[Assumed] = []

    def partition_key(self) -> str:
        return self.pod.metadata.uid


class ExtenderAnswer(Part, frozen=True):
    """What one extender answered for one pod: filter (the nodes it kept, failed, failed for good)
    or prioritize (scores and the extender's weight); `error` when the call failed, `ignored` when
    the extender is ignorable and the failure was passed over."""

    extender: str
    verb: str
    kept: list[str] = []
    failed: dict[str, str] = {}
    unresolvable: dict[str, str] = {}
    scores: dict[str, int] = {}
    weight: int = 0
    victims: dict[str, list[str]] = {}
    """preempt: node → the uids of the victims the extender kept there (in its order)."""
    pdb_violations: dict[str, int] = {}
    error: str = ""
    ignored: bool = False


class PreemptionDecided(Event, frozen=True):
    """The outcome of preemption: a nominated node and its victims, or none ("" and a message)."""

    preemptor_uid: str
    nominated_node: str
    victims: list[PodRef] = []
    message: str = ""
    attempt_id: str = ""
    folded: dict[str, list[int]] = {}
    """The positions of the view decided on, set wherever they are not the request's watermark:
    past it (the service folds everything it has received), or short of it (the wait ran out)."""
    cleared: list[str] = []
    """Pods whose nomination this decision cleared (lower-priority pods nominated to the chosen node,
    or the preemptor's own when no node helps)."""
    extenders: list[ExtenderAnswer] = []
    """What extenders with preemptVerb answered (replay hands these back instead of calling)."""
    fits: str = ""
    """Set when the view had moved on since the attempt and the pod fits this node now: nobody is
    evicted, the pod is nominated there (`nominated_node`) and the queue retries it at once."""
    request_at: int = -1
    """Its request's offset on `preemption-requests`; later decisions name it so. -1: not known
    (made by an earlier build)."""
    in_flight: list[int] = []
    """The earlier preemptions not yet visible on the view this one was decided on, named by their
    requests' offsets (`request_at`) as runs (first, count, …): their victims were taken as gone and
    their nominations as made, in request order (`shared.protocol.preemption_in_flight`)."""
    evicting: list[str] = []
    nominating: dict[str, str] = {}
    """The same overlay written out (uid → node, "" for cleared), as decisions recorded it when an
    in-flight one had no `request_at` (made by an earlier build); empty otherwise."""

    def partition_key(self) -> str:
        return self.preemptor_uid


# --- decisions (key: pod uid) -------------------------------------------------------------------


class SchedulingAttempted(Event, frozen=True):
    """One scheduling attempt's outcome, with what replay needs to reproduce it (seed, config hash).

    `node_name` is the chosen node, or None when the pod stays pending with `message` as the reason.
    """

    pod_uid: str
    attempt: int
    profile: str
    node_name: str | None
    message: str | None
    seed: int
    config_hash: str
    batch_id: str = ""
    """The cycle's FilterBatchRequested (phase "filter"): its watermark, assumptions and round-robin
    start are the state the decision was made on."""

    def partition_key(self) -> str:
        return self.pod_uid


class ExtendersAnswered(Event, frozen=True):
    """The scheduler extenders' answers for a pod in a cycle, in the order they were asked; replay
    applies these instead of calling the extenders again."""

    batch_id: str
    pod_uid: str
    answers: list[ExtenderAnswer] = []

    def partition_key(self) -> str:
        return self.pod_uid


class LateBatchDecided(Event, frozen=True):
    """A cycle decided on a view other than its request's: filtered at the request's watermark, it
    was decided later on the queue's view at this watermark and assumptions (every pod re-checked
    there, as a pod placed after others in a batch is). Cycles whose pods waited for scheduler
    extenders, and cycles filtered while the cycle before them was being decided, are such cycles."""

    batch_id: str
    watermark: dict[str, list[int]] = {}
    assumed: list[Assumed] = []

    def partition_key(self) -> str:
        return self.batch_id


class SchedulerStarted(Event, frozen=True):
    """A queue went live with this configuration: replay looks a decision's `config_hash` up here."""

    config: KubeSchedulerConfiguration | None
    config_hash: str
    seed: int
    batch_size: int

    def partition_key(self) -> str:
        return "scheduler"


# --- dead-letters (key: origin topic) -----------------------------------------------------------


class DeadLettered(Event, frozen=True):
    """A message that could not be decoded or handled, kept verbatim (base64) with its origin."""

    origin_topic: str
    partition: int
    offset: int
    key: str | None
    reason: str
    raw: str

    def partition_key(self) -> str:
        return self.origin_topic


NodeEvent: TypeAlias = NodeUpserted | NodeDeleted
PodEvent: TypeAlias = (
    PodSubmitted | PodDeleted | PodNominated | PodEvicted
    | PriorityClassUpserted | PriorityClassDeleted | PodDisruptionBudgetUpserted | PodDisruptionBudgetDeleted
    | NamespaceUpserted | NamespaceDeleted
)
PolicyEvent: TypeAlias = (
    PriorityClassUpserted | PriorityClassDeleted | PodDisruptionBudgetUpserted | PodDisruptionBudgetDeleted
    | NamespaceUpserted | NamespaceDeleted
)
FilterRequestEvent: TypeAlias = FilterBatchRequested
ShardResultEvent: TypeAlias = ShardFiltered
BindEvent: TypeAlias = BindRequested
PlacementEvent: TypeAlias = PodBound | BindRejected
PreemptionEvent: TypeAlias = PreemptionRequested | PreemptionDecided
DecisionEvent: TypeAlias = SchedulingAttempted | ExtendersAnswered | LateBatchDecided | SchedulerStarted
DeadLetterEvent: TypeAlias = DeadLettered

AnyEvent: TypeAlias = (
    NodeUpserted | NodeDeleted
    | PodSubmitted | PodDeleted | PodNominated | PodEvicted
    | PriorityClassUpserted | PriorityClassDeleted | PodDisruptionBudgetUpserted | PodDisruptionBudgetDeleted
    | NamespaceUpserted | NamespaceDeleted
    | FilterBatchRequested | ShardFiltered | BindRequested | PodBound | BindRejected
    | PreemptionRequested | PreemptionDecided | SchedulingAttempted | ExtendersAnswered | LateBatchDecided
    | SchedulerStarted
    | DeadLettered
)
"""The union of every payload; an envelope's payload is one of these."""

EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (
        NodeUpserted, NodeDeleted, PodSubmitted, PodDeleted, PodNominated, PodEvicted,
        PriorityClassUpserted, PriorityClassDeleted, PodDisruptionBudgetUpserted, PodDisruptionBudgetDeleted,
        NamespaceUpserted, NamespaceDeleted, FilterBatchRequested, ShardFiltered, BindRequested, PodBound, BindRejected,
        PreemptionRequested, PreemptionDecided, SchedulingAttempted, ExtendersAnswered, LateBatchDecided,
        SchedulerStarted, DeadLettered,
    )
}
"""Event type name (the tag) → payload class."""
