"""ImageLocality, ported from upstream's image_locality_test.go."""

from __future__ import annotations

import hashlib

import pytest

from shared.framework.cycle_state import CycleState
from shared.framework.node_info import NodeInfo
from shared.framework.snapshot import Snapshot, index_images
from shared.plugins.imagelocality import ImageLocality, calculate_priority, normalized_image_name
from tests.builders import MakeNode, MakePod

MB = 1024 * 1024


class FakeHandle:
    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def snapshot(self) -> Snapshot:
        return self._snapshot


def node(name: str, *images: tuple[list[str], int]) -> MakeNode:
    n = MakeNode().name(name)
    for names, size_mb in images:
        n.image(names, size_mb * MB)
    return n


NODE_403002000 = ((["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
                  (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
                  (["gcr.io/2000:latest"], 2000))
NODE_25010 = ((["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10))
NODE_60040900 = ((["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900))
NODE_300600900 = ((["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600), (["gcr.io/900:latest"], 900))
NODE_400030 = ((["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30))
NODE_203040 = ((["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40))
NO_IMAGES: tuple[tuple[list[str], int], ...] = ()


def pod(*images: str, init: tuple[str, ...] = ()) -> MakePod:
    p = MakePod().name("p")
    for image in images:
        p.container(image=image)
    for image in init:
        p.init_req(None, image=image)
    return p


CASES = [
    ("two images spread on two nodes, prefer the larger image one", pod("gcr.io/40", "gcr.io/250"),
     [NODE_403002000, NODE_25010], [0, 5]),
    ("two images on one node, prefer this node", pod("gcr.io/40", "gcr.io/300"), [NODE_403002000, NODE_25010], [7, 0]),
    ("if exceed limit, use limit", pod("gcr.io/10", "gcr.io/4000"), [NODE_400030, NODE_25010], [100, 0]),
    ("if exceed limit, use limit (with node which has no images present)", pod("gcr.io/10", "gcr.io/4000"),
     [NODE_400030, NODE_25010, NO_IMAGES], [66, 0, 0]),
    ("pod with multiple large images, node2 is preferred", pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
     [NODE_60040900, NODE_300600900, NO_IMAGES], [32, 36, 0]),
    ("pod with multiple small images", pod("gcr.io/30", "gcr.io/40"), [NODE_203040, NODE_400030], [1, 0]),
    ("include InitContainers: two images spread on two nodes, prefer the larger image one",
     pod("gcr.io/30", init=("gcr.io/300",)), [NODE_403002000, NODE_203040], [6, 0]),
    ("tagged images match exactly", pod("gcr.io/300:v1", "gcr.io/40:v1"), [NODE_403002000, NO_IMAGES], [7, 0]),
    ("another tag misses", pod("gcr.io/300:v2"), [NODE_403002000, NO_IMAGES], [0, 0]),
]


@pytest.mark.parametrize(("pod_builder", "node_images", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_score(pod_builder: MakePod, node_images: list[tuple[tuple[list[str], int], ...]], expected: list[int]) -> None:
    infos: list[NodeInfo] = [node(f"node{i}", *images).info() for i, images in enumerate(node_images)]
    index_images(infos)
    pl = ImageLocality.new(None, FakeHandle(Snapshot(infos)))  # type: ignore[arg-type]  # a stand-in: only its snapshot is read
    info = pod_builder.info()
    got = []
    for n in infos:
        score, status = pl.score(CycleState(), info, n)
        assert status is None
        got.append(score)
    assert got == expected


def _digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


NAME_CASES = [
    ("add :latest postfix 1", "root", "root:latest"),
    ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
    ("keep it as is 1", "root:tag", "root:tag"),
    ("keep it as is 2", "root@" + _digest("root"), "root@" + _digest("root")),
]


@pytest.mark.parametrize(("name", "want"), [c[1:] for c in NAME_CASES], ids=[c[0] for c in NAME_CASES])
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


@pytest.mark.parametrize(("total", "containers", "want"), [
    (0, 1, 0), (23 * MB, 1, 0), (1000 * MB, 1, 100), (5000 * MB, 1, 100), (511 * MB + MB // 2, 1, 50), (0, 0, 0),
], ids=["nothing", "at min", "at max", "over max", "midway", "no containers"])
def test_calculate_priority(total: int, containers: int, want: int) -> None:
    assert calculate_priority(total, containers) == want
