"""Where two evaluations of one attempt part ways: the first node (in walk order) whose filter
verdict differs and the plugin behind it, else the first score plugin whose raw or weighted score
differs. One side may be the shards' recorded answers, or both may be replayed (a what-if)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from shared.framework.interfaces import NodePluginScores
from shared.framework.snapshot import Snapshot
from shared.framework.status import Status
from shared.protocol.answers import Walk, names_of
from shared.protocol.failure_groups import code_name


@dataclass
class Verdicts:
    """An attempt's per-node filter verdicts and raw scores, however it was obtained."""

    prefilter: Status | None
    nodes: dict[str, tuple[str, str]]
    """Node → (plugin, "fits" or the reasons)."""
    raw: dict[str, dict[str, int]]
    error: str = ""


def verdicts(walks: Iterable[Walk], names: Sequence[str],
             raw: Mapping[str, Mapping[str, int]] | None = None) -> Verdicts:
    """The walks' verdicts; `names`: the view's nodes in order, as at the request's watermark (the
    positions of packed walks read there)."""
    prefilter: Status | None = None
    nodes: dict[str, tuple[str, str]] = {}
    scores: dict[str, dict[str, int]] = {}
    error = ""
    for w in walks:
        error = error or w.error
        prefilter = prefilter or w.prefilter
        feasible = w.named(names).feasible
        for name in feasible:
            nodes.setdefault(name, ("", "fits"))
        for f in [*w.failures, *([w.nominated] if w.nominated else [])]:
            verdict = (f.status.plugin, ", ".join(f.status.reasons) or code_name(f.status.code))
            nodes.update(dict.fromkeys(f.nodes if f.at is None else names_of(names, f.at), verdict))
        if w.scored:
            for plugin, column in w.columns.items():
                scores.setdefault(plugin, {}).update(zip(feasible, column.tolist()))
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


def _failure(s: Status | None) -> str:
    return "passes" if s is None else f"{s.plugin}: {', '.join(s.reasons) or code_name(s.code)}"


def _verdict(v: tuple[str, str]) -> str:
    return "fits" if v[1] == "fits" else f"{v[0]}: {v[1]}"
