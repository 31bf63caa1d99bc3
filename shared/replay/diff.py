"""Where two evaluations of one attempt part ways: the first node (in walk order) whose filter
verdict differs and the plugin behind it, else the first score plugin whose raw or weighted score
differs. One side may be the shards' recorded answers, or both may be replayed (a what-if)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from shared.events import NodeFailure, PodShardResult
from shared.framework.interfaces import NodePluginScores
from shared.framework.snapshot import Snapshot


@dataclass
class Verdicts:
    """An attempt's per-node filter verdicts and raw scores, however it was obtained."""

    prefilter: NodeFailure | None
    nodes: dict[str, tuple[str, str]]
    """Node → (plugin, "fits" or the reasons)."""
    raw: dict[str, dict[str, int]]
    error: str = ""


def verdicts(results: Iterable[PodShardResult], raw: Mapping[str, Mapping[str, int]] | None = None) -> Verdicts:
    prefilter: NodeFailure | None = None
    nodes: dict[str, tuple[str, str]] = {}
    scores: dict[str, dict[str, int]] = {}
    error = ""
    for r in results:
        error = error or r.error
        prefilter = prefilter or r.prefilter
        for name in r.feasible:
            nodes.setdefault(name, ("", "fits"))
        for f in [*r.failures, *([r.nominated] if r.nominated else [])]:
            for name in f.nodes:
                nodes[name] = (f.plugin, ", ".join(f.reasons) or f.code)
        if r.scored:
            for plugin, column in r.scores.items():
                scores.setdefault(plugin, {}).update(zip(r.feasible, column))
    if raw is not None:
        scores = {p: dict(col) for p, col in raw.items()}
    return Verdicts(prefilter, nodes, scores, error)


def first_difference(a: Verdicts, b: Verdicts, snapshot: Snapshot, start: int,
                     plugins: Sequence[str]) -> tuple[str, str]:
    """(plugin, what differs) between side a (recorded) and side b (replayed); ("", "") if none."""
    if a.error != b.error:
        return "", f"error: {a.error or 'none'} / {b.error or 'none'}"
    if (a.prefilter is None) != (b.prefilter is None) or (
            a.prefilter is not None and b.prefilter is not None
            and (a.prefilter.plugin, a.prefilter.reasons) != (b.prefilter.plugin, b.prefilter.reasons)):
        failed = b.prefilter or a.prefilter
        assert failed is not None  # the two differ, so one of them failed
        return failed.plugin, f"PreFilter: {_failure(a.prefilter)} / {_failure(b.prefilter)}"
    names = snapshot.names
    n = len(names)
    for i in range(n):
        name = names[(start + i) % n] if n else ""
        va, vb = a.nodes.get(name), b.nodes.get(name)
        if va is None or vb is None or va == vb:
            continue
        plugin = vb[0] if vb[1] != "fits" else va[0]
        return plugin, f"node {name}: {_verdict(va)} / {_verdict(vb)}"
    for plugin in plugins:
        ca, cb = a.raw.get(plugin, {}), b.raw.get(plugin, {})
        for node in ca.keys() & cb.keys():
            if ca[node] != cb[node]:
                return plugin, f"raw score on {node}: {ca[node]} / {cb[node]}"
    return "", ""


def weighted_difference(a: Sequence[NodePluginScores], b: Sequence[NodePluginScores],
                        hosts: Iterable[str]) -> tuple[str, str]:
    """The first plugin whose weighted score on one of `hosts` differs between two scorings."""
    by_a = {s.name: {p.name: p.score for p in s.scores} for s in a}
    by_b = {s.name: {p.name: p.score for p in s.scores} for s in b}
    for host in hosts:
        sa, sb = by_a.get(host, {}), by_b.get(host, {})
        for plugin in [*sa, *(p for p in sb if p not in sa)]:
            if sa.get(plugin) != sb.get(plugin):
                return plugin, f"weighted score on {host}: {sa.get(plugin, '-')} / {sb.get(plugin, '-')}"
    return "", ""


def _failure(f: NodeFailure | None) -> str:
    return "passes" if f is None else f"{f.plugin}: {', '.join(f.reasons) or f.code}"


def _verdict(v: tuple[str, str]) -> str:
    return "fits" if v[1] == "fits" else f"{v[0]}: {v[1]}"
