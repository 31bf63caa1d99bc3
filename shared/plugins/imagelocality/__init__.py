"""ImageLocality: prefer nodes that already hold the pod's images, weighted by how widely each
image has spread (so one node holding a big image does not attract every pod)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import MAX_NODE_SCORE, Handle, ScorePlugin
from shared.framework.node_info import ImageStateSummary, NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Status
from shared.model import Pod
from shared.plugins import names

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """":latest" is added when the last ':' does not come after the last '/' (no tag)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageStateSummary, total_num_nodes: int) -> int:
    """The image size scaled by the share of nodes holding it (float64 maths, truncated)."""
    spread = state.num_nodes / total_num_nodes
    return int(float(state.size) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    # Both operands are non-negative whenever the pod has a container, so // truncates as Go does.
    denominator = max_threshold - MIN_THRESHOLD
    numerator = MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD)
    if denominator == 0 or numerator == 0:
        return 0
    q = abs(numerator) // abs(denominator)
    return q if (numerator > 0) == (denominator > 0) else -q


def pod_images(pod: Pod) -> tuple[str, ...]:
    """Normalised images of init containers then containers; repeats count each time."""
    spec = pod.spec
    return tuple(normalized_image_name(c.image) for c in (*spec.init_containers, *spec.containers))


class ImageLocality(ScorePlugin):
    NAME = names.IMAGE_LOCALITY
    SNAPSHOT_LOCAL = True  # the node's images, and how many nodes of the snapshot hold each
    SCORE_IGNORES_NODE_PODS = True

    __slots__ = ("_handle", "_pod", "_images")

    def __init__(self, handle: Handle | None = None) -> None:
        self._handle = handle
        # Score runs once per node for the same pod: keep its normalised images.
        self._pod: Pod | None = None
        self._images: tuple[str, ...] = ()

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> ImageLocality:
        return cls(handle)

    def _images_of(self, pod: Pod) -> tuple[str, ...]:
        if pod is not self._pod:
            self._images = pod_images(pod)
            self._pod = pod
        return self._images

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        images = self._images_of(pod.pod)
        image_states = node_info.image_states
        total = 0
        if image_states:
            num_nodes = self._handle.snapshot().num_nodes() if self._handle is not None else 0
            for image in images:
                summary = image_states.get(image)
                if summary is not None and num_nodes:
                    total += scaled_image_score(summary, num_nodes)
        return calculate_priority(total, len(images)), None


__all__ = ["ImageLocality", "calculate_priority", "normalized_image_name", "pod_images", "scaled_image_score"]
